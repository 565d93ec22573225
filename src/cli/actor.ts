import os from "node:os";

/**
 * Who ran a CLI command that the reconciliation log records (approvals, platform forget): the
 * name given with `--as`, else the OS account the process runs as, read from its uid (not $USER,
 * which a container or cron leaves unset and anyone can set), else the uid itself.
 */
export function cliActor(as: string | undefined): string {
  if (as === undefined) return `cli:${osAccount()}`;
  const name = as.trim();
  if (!name) throw new Error("--as needs a name, for example --as jane@example.com");
  return `cli:${name}`;
}

function osAccount(): string {
  try {
    return os.userInfo().username;
  } catch {
    // No passwd entry for the uid (an arbitrary uid in a container): the uid is still true.
    return `uid ${process.getuid?.() ?? "unknown"}`;
  }
}

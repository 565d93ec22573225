import os from "node:os";

/**
 * Who ran a CLI command that the reconciliation log records (approvals, platform forget): the
 * name given with `--as`, else the OS account the process runs as, read from its uid (not $USER,
 * which a container or cron leaves unset and anyone can set), else the uid itself.
 */
export function cliActor(as: string | undefined): string {
  return as === undefined ? `cli:${osAccount()}` : `cli:${nameGiven(as)}`;
}

/**
 * Who a campaign command acts as: the reviewer named with `--as`, with the OS account that ran it as
 * the principal (recorded `cli:<os user> as <name>`); without `--as`, the OS account itself.
 */
export function cliReviewer(as: string | undefined): { name: string; principal?: string } {
  const account = `cli:${osAccount()}`;
  return as === undefined ? { name: account } : { name: nameGiven(as), principal: account };
}

function nameGiven(as: string): string {
  const name = as.trim();
  if (!name) throw new Error("--as needs a name, for example --as jane@example.com");
  return name;
}

function osAccount(): string {
  try {
    return os.userInfo().username;
  } catch {
    // No passwd entry for the uid (an arbitrary uid in a container): the uid is still true.
    return `uid ${process.getuid?.() ?? "unknown"}`;
  }
}

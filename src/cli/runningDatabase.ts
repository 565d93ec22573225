import { constants } from "node:fs";
import { chmod, lstat, open, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";

/**
 * A running `npm start` on the embedded defaults owns the embedded PostgreSQL: a second server
 * cannot start on the same folder. So `start` records the URL of its database beside the folder
 * (`<EMBEDDED_PG_DIR>.running.json`, `.data/postgres.running.json` by default, mode 600: the URL
 * holds the password) and removes it when it stops; the other commands (`token create`, `plan`, …)
 * use that database while the process that wrote it is alive, instead of starting their own server.
 *
 * The record is trusted only when it is what `start` writes: a regular file (no symlink to
 * somewhere else), owned by this user, readable by no one else, naming a live process of this
 * user. Anything else is no record: a command then starts or finds the database as without one.
 */

type Recorded = { pid: number; url: string };
const recordOf = (pgDir: string) => `${path.resolve(pgDir)}.running.json`;

/** Records this process's database; the returned function removes the record (call it when the server stops). */
export async function recordRunningDatabase(pgDir: string, url: string): Promise<() => Promise<void>> {
  const file = recordOf(pgDir);
  const draft = `${file}.${process.pid}.tmp`;
  await rm(draft, { force: true });
  // O_EXCL: a draft someone else put there first (a symlink to another file) is never written through.
  const handle = await open(
    draft,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await handle.writeFile(JSON.stringify({ pid: process.pid, url } satisfies Recorded));
  } finally {
    await handle.close();
  }
  await chmod(draft, 0o600);
  await rename(draft, file);
  return async () => {
    // Only our own record: another start may have replaced it since.
    const recorded = await readRecord(file);
    if (recorded?.pid === process.pid) await rm(file, { force: true });
  };
}

/** The database a running `npm start` recorded, when the process that recorded it is alive. */
export async function runningDatabaseUrl(pgDir: string): Promise<string | undefined> {
  const recorded = await readRecord(recordOf(pgDir));
  return recorded && ownProcessAlive(recorded.pid) ? recorded.url : undefined;
}

/**
 * A record whose process is gone (or is not this user's): what a trial killed without stopping
 * (SIGKILL, a closed terminal, a crash) leaves behind. `start` then stops the PostgreSQL it left
 * running (db/embedded.ts) and removes the record.
 */
export async function deadRecord(pgDir: string): Promise<{ pid: number; remove(): Promise<void> } | undefined> {
  const file = recordOf(pgDir);
  const recorded = await readRecord(file);
  if (!recorded || ownProcessAlive(recorded.pid)) return undefined;
  return { pid: recorded.pid, remove: () => rm(file, { force: true }) };
}

/** A live process of this user: another user's (EPERM) is not a trial of ours. */
function ownProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function readRecord(file: string): Promise<Recorded | undefined> {
  try {
    const stat = await lstat(file);
    const ownUser = typeof process.getuid !== "function" || stat.uid === process.getuid();
    if (!stat.isFile() || !ownUser || (stat.mode & 0o077) !== 0) return undefined;
    const recorded = JSON.parse(await readFile(file, "utf8")) as Partial<Recorded>;
    return typeof recorded.pid === "number" && typeof recorded.url === "string"
      ? { pid: recorded.pid, url: recorded.url }
      : undefined;
  } catch {
    return undefined; // none, or half a file from a process that died while writing it
  }
}

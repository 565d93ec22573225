import { chmod, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { isAlive } from "../db/embedded.js";

/**
 * A running `npm start` on the embedded defaults owns the embedded PostgreSQL: a second server
 * cannot start on the same folder. So `start` records the URL of its database beside the folder
 * (`<EMBEDDED_PG_DIR>.running.json`, `.data/postgres.running.json` by default, mode 600: the URL
 * holds the password) and removes it when it stops; the other commands (`token create`, `plan`, …)
 * use that database while the process that wrote it is alive, instead of starting their own server.
 */

type Recorded = { pid: number; url: string };
const recordOf = (pgDir: string) => `${path.resolve(pgDir)}.running.json`;

/** Records this process's database; the returned function removes the record (call it when the server stops). */
export async function recordRunningDatabase(pgDir: string, url: string): Promise<() => Promise<void>> {
  const file = recordOf(pgDir);
  const draft = `${file}.${process.pid}.tmp`;
  await writeFile(draft, JSON.stringify({ pid: process.pid, url } satisfies Recorded), { mode: 0o600 });
  await chmod(draft, 0o600); // writeFile keeps the mode of an existing file
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
  return recorded && isAlive(recorded.pid) ? recorded.url : undefined;
}

async function readRecord(file: string): Promise<Recorded | undefined> {
  try {
    const recorded = JSON.parse(await readFile(file, "utf8")) as Partial<Recorded>;
    return typeof recorded.pid === "number" && typeof recorded.url === "string"
      ? { pid: recorded.pid, url: recorded.url }
      : undefined;
  } catch {
    return undefined; // none, or half a file from a process that died while writing it
  }
}

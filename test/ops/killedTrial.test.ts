import { chmod, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAlive } from "../../src/db/embedded.js";
import { runningDatabaseUrl } from "../../src/cli/runningDatabase.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";

/**
 * A trial killed without stopping (SIGKILL, a closed terminal) leaves its record and its detached
 * PostgreSQL behind. The next `npm start` refused ("already running … started by another
 * process") and its advice led to "ADMIN_TOKEN is required" (issue 47, item 1). Now it recognises
 * the record of a process that is gone, stops that PostgreSQL and goes on. And the record is
 * trusted only as `start` writes it (issue 45, low item 5).
 */
describe("`npm start` after a trial was killed", () => {
  let dir: string;
  const running: ConnectorProcess[] = [];
  const embedded = () => ({ DATABASE_URL: "", PLATFORM_URL: "", EMBEDDED_PG_DIR: path.join(dir, "postgres") });
  const postmasterPid = async () =>
    Number((await readFile(path.join(dir, "postgres", "postmaster.pid"), "utf8")).split("\n")[0]);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-killed-trial-"));
    // As root the server runs as the 'postgres' user, which must be able to enter the folder.
    await chmod(dir, 0o755);
  });
  afterAll(async () => {
    for (const connector of running) await connector.kill("SIGTERM");
    if (existsSync(path.join(dir, "postgres", "postmaster.pid"))) {
      const pid = await postmasterPid();
      if (isAlive(pid)) process.kill(pid, "SIGINT");
    }
    await rm(dir, { recursive: true, force: true });
  });

  it("stops the PostgreSQL it left running, removes its record, and starts", { timeout: 180_000 }, async () => {
    const killed = await spawnConnector(embedded());
    await killed.kill("SIGKILL");
    const orphan = await postmasterPid();
    expect(isAlive(orphan), "the killed trial's PostgreSQL lives on").toBe(true);
    expect(existsSync(path.join(dir, "postgres.running.json"))).toBe(true);

    const next = await spawnConnector({ ...embedded(), LOG_LEVEL: "warn" });
    running.push(next);
    expect(isAlive(orphan)).toBe(false);
    expect(await postmasterPid()).not.toBe(orphan);
    expect(next.output()).toContain("a trial killed without stopping left its record behind");
    expect(JSON.parse(await readFile(path.join(dir, "postgres.running.json"), "utf8"))).toMatchObject({
      pid: next.child.pid,
    });
  });

  it("trusts a record only when it is start's own: a regular file, this user's, mode 600", async () => {
    const record = path.join(dir, "postgres.running.json");
    const pgDir = path.join(dir, "postgres");
    expect(await runningDatabaseUrl(pgDir)).toBeDefined();
    const text = await readFile(record, "utf8");
    expect((await stat(record)).mode & 0o777).toBe(0o600);

    await chmod(record, 0o644);
    expect(await runningDatabaseUrl(pgDir), "readable by others").toBeUndefined();
    await chmod(record, 0o600);

    const elsewhere = path.join(dir, "elsewhere.json");
    await writeFile(elsewhere, text, { mode: 0o600 });
    await rm(record);
    await symlink(elsewhere, record);
    expect(await runningDatabaseUrl(pgDir), "a symlink").toBeUndefined();
    await rm(record);
    await writeFile(record, text, { mode: 0o600 });
    expect(await runningDatabaseUrl(pgDir)).toBeDefined();
  });
});

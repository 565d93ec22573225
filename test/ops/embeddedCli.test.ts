import { execFile, spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import type { CliResult } from "../support/cli.js";

/**
 * docs/okta.md's `token create` (and every other database command) typed in a second terminal
 * while `npm start` runs on its embedded defaults: the command uses the running instance's
 * database, which `npm start` records under `.data/` for its owner only and removes when it stops.
 * Each command used to start a second PostgreSQL on the same folder, which refused, and printed
 * `undefined`.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const RECORD = "postgres.running.json";

describe("the CLI beside a running `npm start` on the embedded defaults", () => {
  let dir: string;
  let connector: ConnectorProcess;
  const embedded = () => ({ DATABASE_URL: "", PLATFORM_URL: "", EMBEDDED_PG_DIR: path.join(dir, "postgres") });
  const cli = (args: string[], env: Record<string, string> = {}): Promise<CliResult> =>
    promisify(execFile)(process.execPath, [path.join(ROOT, "bin/scim-connector.js"), ...args], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: "error", ...embedded(), ...env },
      timeout: 60_000,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: CliResult) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
    );

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-embedded-cli-"));
    // As root the server runs as the 'postgres' user, which must be able to enter the folder.
    await chmod(dir, 0o755);
    connector = await spawnConnector(embedded());
  }, 120_000);
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  it("`token create` and `platform show` use the running instance's database", { timeout: 120_000 }, async () => {
    const created = await cli(["token", "create", "--name", "okta"]);
    expect(created, created.stderr).toMatchObject({ code: 0 });
    const token = /^\s+(scim_\S+)$/m.exec(created.stdout)?.[1];
    expect(token, created.stdout).toBeDefined();
    // The running service knows the token: the command wrote to its database.
    const users = await fetch(`${connector.url}/scim/v2/Users`, { headers: { authorization: `Bearer ${token}` } });
    expect(users.status).toBe(200);

    const shown = await cli(["platform", "show"]);
    expect(shown).toMatchObject({ code: 0 });
    expect(shown.stdout).not.toContain("undefined");
  });

  it("`mapping migrate FILE --pin-ids` reads the running instance's database", { timeout: 120_000 }, async () => {
    // It resolved the database itself and refused ("already running … started by another process").
    const file = path.join(dir, "legacy-mapping.yaml");
    await writeFile(
      file,
      "rules:\n  - group: Marketing\n    workspaces:\n      - name: EU Production\n        permissions: [manage_tags]\n",
    );
    const migrated = await cli(["mapping", "migrate", file, "--pin-ids"]);
    expect(migrated, migrated.stderr).toMatchObject({ code: 0 });
    expect(migrated.stderr).not.toContain("already running");
    expect(migrated.stderr).toContain("workspace EU Production (line 4): no identifier learned yet");
  });

  it("records the running database for its owner only", async () => {
    const record = path.join(dir, RECORD);
    expect((await stat(record)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(record, "utf8"))).toMatchObject({
      pid: connector.child.pid,
      url: expect.stringMatching(/^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/scim_connector$/),
    });
  });

  it("without a live record, names the process holding the embedded PostgreSQL and the DATABASE_URL to use", async () => {
    const record = path.join(dir, RECORD);
    await rename(record, `${record}.aside`);
    try {
      const [pid, , , port] = (await readFile(path.join(dir, "postgres", "postmaster.pid"), "utf8")).split("\n");
      const expectRefused = async () => {
        const refused = await cli(["platform", "show"]);
        expect(refused.code).toBe(1);
        expect(refused.stderr).not.toContain("undefined");
        expect(refused.stderr).toContain(`pid ${pid}`);
        expect(refused.stderr).toContain(`DATABASE_URL=postgres://postgres:`);
        expect(refused.stderr).toContain(`@127.0.0.1:${port}/scim_connector`);
      };
      await expectRefused(); // no record at all
      // A record left by a process that is gone (a SIGKILLed start) is not used.
      const gone = spawn(process.execPath, ["-e", ""]);
      await new Promise((resolve) => gone.once("exit", resolve));
      await writeFile(record, JSON.stringify({ pid: gone.pid, url: "postgres://postgres:x@127.0.0.1:1/gone" }), {
        mode: 0o600,
      });
      await expectRefused();
    } finally {
      await rename(`${record}.aside`, record);
    }
  });

  it("says why an embedded PostgreSQL did not start, never `undefined`", async () => {
    // A folder that looks initialised (PG_VERSION) but holds no cluster: the server exits at once.
    const broken = path.join(dir, "broken");
    await mkdir(broken);
    await writeFile(path.join(broken, "PG_VERSION"), "17\n");
    const refused = await cli(["platform", "show"], { EMBEDDED_PG_DIR: broken });
    expect(refused.code).toBe(1);
    expect(refused.stderr).not.toContain("undefined");
    expect(refused.stderr).toContain(`The embedded PostgreSQL in ${broken} did not start: `);
    expect(refused.stderr).toContain("postgresql.conf");
  });

  it("removes the record when it stops", { timeout: 60_000 }, async () => {
    const exited = new Promise<number | null>((resolve) => connector.child.once("exit", (code) => resolve(code)));
    connector.child.kill("SIGTERM");
    expect(await exited, connector.output().slice(-2000)).toBe(0);
    expect(existsSync(path.join(dir, RECORD))).toBe(false);
  });
});

import { execFile, spawn } from "node:child_process";
import {
  getPermissionModelState,
  listPlatformIdentifiers,
  noteModelSeen,
  recordIdentifiers,
} from "../../src/db/platform/identifierRepository.js";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { freePort } from "../../src/db/embedded.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { runCli } from "../support/cli.js";
import { bindPlatformIfUnbound } from "../../src/db/platform/bindingRepository.js";
import { createHold, listHolds } from "../../src/db/reconcile/holdRepository.js";
import { platformIdentity } from "../../src/reconcile/platformBinding.js";
import { emulatorDump } from "../support/emulator.js";
import { ADMIN_TOKEN, IDP_TOKEN, idp, type Stack, writeMappingFile } from "../support/stack.js";

/**
 * Production fails safe (docs/operations.md, "Changing the platform"): without PLATFORM_URL or an
 * explicit MAPPING_FILE it does not start; a database used against one platform does not plan
 * against another until `scim-connector platform forget --confirm`, after which the IdP's users are
 * created on the new platform. Every start is a real child process; each platform a real emulator.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "bin/scim-connector.js");
const run = promisify(execFile);

/** Runs `start` until it exits (these configurations never listen). */
function startUntilExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "start"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "error", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("exit", (code) => resolve({ code, output }));
  });
}

const PRODUCTION = {
  NODE_ENV: "production",
  DATABASE_URL: "postgres://scim:unused@127.0.0.1:1/never_reached",
  SCIM_TOKEN: IDP_TOKEN,
  ADMIN_TOKEN,
  PLATFORM_SCIM_TOKEN: "dev-scim-token",
  PLATFORM_REQUEST_ORIGIN: "scim-connector-test",
};

describe("NODE_ENV=production names where changes go, or does not start", () => {
  it("without PLATFORM_URL: exit 78 naming PLATFORM_URL, not a start against the embedded emulator", async () => {
    const { code, output } = await startUntilExit({ ...PRODUCTION, MAPPING_FILE: "/etc/scim-connector/mapping.yaml" });
    expect(code).toBe(78);
    expect(output).toContain("PLATFORM_URL: is required when NODE_ENV=production");
    expect(output).not.toContain("MAPPING_FILE:");
    expect(output).not.toContain("scim-connector is running");
  });

  it("without MAPPING_FILE: exit 78 naming MAPPING_FILE, not a start with the demo mapping", async () => {
    const { code, output } = await startUntilExit({
      ...PRODUCTION,
      PLATFORM_URL: "https://rest.iad-02.acme-platform.net",
    });
    expect(code).toBe(78);
    expect(output).toContain("MAPPING_FILE: is required when NODE_ENV=production");
    expect(output).toContain("config/mapping.example.yaml");
    expect(output).not.toContain("PLATFORM_URL:");
  });

  it("with MAPPING_FILE naming the demo mapping: refused, naming its placeholder line, wherever it lives", async () => {
    const { code, output } = await startUntilExit({
      ...PRODUCTION,
      PLATFORM_URL: "https://rest.iad-02.acme-platform.net",
      MAPPING_FILE: path.join(ROOT, "config/mapping.yaml"),
    });
    expect(code).not.toBe(0);
    expect(output).toMatch(/config\/mapping\.yaml:\d+:1: this mapping is a template's placeholder/);
    expect(output).not.toContain("scim-connector is running");
  });
});

describe("a database used against one platform, then started against another", () => {
  let database: TestDatabase;
  let trial: RunningEmulator;
  let real: RunningEmulator;
  let mappingFile: string;
  let connector: ConnectorProcess | undefined;
  let port: number;

  beforeAll(async () => {
    database = await createTestDatabase();
    trial = await startEmulator();
    real = await startEmulator();
    mappingFile = await writeMappingFile();
    port = await freePort();
  });
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await trial?.close();
    await real?.close();
    await database?.drop();
  });

  const envFor = (platform: RunningEmulator) => ({
    ...PRODUCTION,
    DATABASE_URL: database.url,
    PLATFORM_URL: platform.url,
    MAPPING_FILE: mappingFile,
    RECONCILE_POLL_MS: "100",
    RESYNC_CRON: "off",
  });
  const cli = (platform: RunningEmulator, ...args: string[]) =>
    run(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...envFor(platform), LOG_LEVEL: "error" },
    });
  const userNames = async (platform: RunningEmulator) =>
    (await emulatorDump(platform.url)).dashboardUsers.map((u) => u.userName).sort();

  it(
    "refuses to start until `platform forget --confirm`; then the users are created on the new platform",
    { timeout: 240_000 },
    async () => {
      connector = await spawnConnector(envFor(trial), port);
      const scim = idp({ service: { url: connector.url } } as Stack);
      const ann = await scim.createUser("ann@example.com");
      const bob = await scim.createUser("bob@example.com");
      await scim.createGroup("Marketing", [ann, bob]);
      await vi.waitFor(async () => expect(await userNames(trial)).toEqual(["ann@example.com", "bob@example.com"]), {
        timeout: 60_000,
        interval: 100,
      });
      await connector.kill();
      connector = undefined;

      // Against the real platform: the planner would say "already matches"; the boot says why it stops.
      const refused = await spawnConnector(envFor(real), port).then(
        () => "started",
        (error: Error) => error.message,
      );
      expect(refused).toContain("connector exited 78");
      expect(refused).toContain(`this database reconciles with ${trial.url}`);
      expect(refused).toContain("holds 2 account(s)");
      expect(refused).toContain("scim-connector platform forget --dry-run");
      expect(await userNames(real)).toEqual([]);

      await expect(cli(real, "platform", "forget")).rejects.toMatchObject({
        stderr: expect.stringContaining("--dry-run"),
      });
      const dry = await cli(real, "platform", "forget", "--dry-run");
      expect(dry.stdout).toContain(`Would forget what this database knew of ${trial.url}: 2 platform account(s)`);
      expect(dry.stdout).toContain("Nothing was changed.");
      expect((await cli(real, "platform", "show")).stdout).toContain(`reconciles with ${trial.url}`);

      const done = await cli(real, "platform", "forget", "--confirm", "--as", "ops@example.com");
      expect(done.stdout).toContain("Forgot what this database knew of");
      expect(done.stdout).toContain("2 IdP user(s) queued");
      expect((await cli(real, "platform", "show")).stdout).toContain(`reconciles with ${real.url}`);

      connector = await spawnConnector(envFor(real), port);
      await vi.waitFor(async () => expect(await userNames(real)).toEqual(["ann@example.com", "bob@example.com"]), {
        timeout: 60_000,
        interval: 100,
      });
      const marketing = (await emulatorDump(real.url)).dashboardUsers.find((u) => u.userName === "ann@example.com")!;
      expect(marketing.department).toBe("marketing");
      expect(await userNames(trial)).toEqual(["ann@example.com", "bob@example.com"]); // the old platform is left as it was
      const log = await fetch(`${connector.url}/admin/api/log?action=platform-change`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      }).then((r) => r.json() as Promise<{ entries: { actor: string; outcome: string }[] }>);
      expect(log.entries).toEqual([expect.objectContaining({ actor: "cli:ops@example.com", outcome: "succeeded" })]);
    },
  );
});

describe("platform forget against the platform the database is already bound to", () => {
  let database: TestDatabase;
  let mappingFile: string;
  const PLATFORM_URL = "https://platform.example.test/api";
  const annId = "00000000-0000-4000-8000-00000000a001";
  const bobId = "00000000-0000-4000-8000-00000000b002";

  beforeAll(async () => {
    database = await createTestDatabase();
    mappingFile = await writeMappingFile();
    const db = database.db;
    await bindPlatformIfUnbound(db, platformIdentity(PLATFORM_URL), new Date());
    for (const [id, name, platformId] of [
      [annId, "ann@example.com", "p-ann"],
      [bobId, "bob@example.com", "p-bob"],
    ])
      await db.query(
        `INSERT INTO platform_accounts (user_id, user_name, platform_id, state) VALUES ($1, $2, $3, 'active')`,
        [id, name, platformId],
      );
    await createHold(db, {
      userId: annId,
      kind: "deprovision",
      userName: "ann@example.com",
      detail: {},
      now: new Date("2026-11-20T10:00:00Z"),
    });
  });
  afterAll(async () => database?.drop());

  const cliAt = (platformUrl: string, ...args: string[]) =>
    runCli({ database, mappingFile }, args, {
      PLATFORM_URL: platformUrl,
      PLATFORM_SCIM_TOKEN: "dev-scim-token",
      PLATFORM_REQUEST_ORIGIN: "scim-connector-test",
    });
  const cli = (...args: string[]) => cliAt(PLATFORM_URL, ...args);

  it("is refused, dry run or not, and drops nothing: the held actions are listed instead", async () => {
    const dry = await cli("platform", "forget", "--dry-run");
    const confirmed = await cli("platform", "forget", "--confirm", "--as", "ops@example.com");
    for (const run of [dry, confirmed]) {
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`This database already reconciles with ${PLATFORM_URL}: there is nothing to forget`);
      expect(run.stdout).toContain("1 held action(s) waiting for a decision:");
      expect(run.stdout).toMatch(new RegExp(`${annId}\\s+ann@example\\.com\\s+deprovision`));
    }
    const kept = await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM platform_accounts`);
    expect(kept[0]!.n).toBe(2);
    expect(await listHolds(database.db, { pendingOnly: true })).toHaveLength(1);
    const logged = await database.db.query(`SELECT 1 FROM reconcile_log WHERE action = 'platform-change'`);
    expect(logged).toHaveLength(0);
  });

  it("a move lists the held actions it drops before forgetting them, on the dry run and on --confirm", async () => {
    // What was learned from the old platform's answers goes with it.
    await recordIdentifiers(
      database.db,
      [{ kind: "workspace", id: "0b0c5f8e-8d4e-4e1a-9a51-3f2f6f7a0004", name: "EU Production", workspaceId: null }],
      new Date(),
    );
    await noteModelSeen(database.db, "granular", new Date());
    const other = "https://other-region.example.test/api";
    const dry = await cliAt(other, "platform", "forget", "--dry-run");
    expect(dry.code).toBe(0);
    const listed = dry.stdout.indexOf("1 held action(s) waiting for a decision:");
    expect(listed).toBeGreaterThanOrEqual(0);
    expect(dry.stdout.indexOf(`${annId}  ann@example.com`)).toBeGreaterThan(listed);
    expect(dry.stdout).toContain("Would forget what this database knew of");
    const done = await cliAt(other, "platform", "forget", "--confirm", "--as", "ops@example.com");
    expect(done.code).toBe(0);
    expect(done.stdout.indexOf(`${annId}  ann@example.com`)).toBeLessThan(done.stdout.indexOf("Forgot what"));
    expect(done.stdout).toContain("2 platform account(s), 0 unanswered create(s), 1 held action(s)");
    expect(await listHolds(database.db)).toEqual([]);
    expect(await listPlatformIdentifiers(database.db)).toEqual([]);
    expect((await getPermissionModelState(database.db)).granularSeenAt).toBeNull();
  });
});

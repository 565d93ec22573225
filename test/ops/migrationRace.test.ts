import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { adminQuery } from "../support/db.js";
import { withDatabase } from "../support/globalSetup.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";

/**
 * Replicas starting together on an empty database (a first install, or a rollout's new pods):
 * migrations run under an advisory lock, so each is applied once and every replica gets ready.
 * Before the lock, three at once failed to start in four rounds of five (duplicate pg_type rows,
 * CREATE EXTENSION). And with MIGRATE_AT_BOOT=false a replica does not migrate: on an older schema
 * it refuses to start and says what to run; after `scim-connector migrate` it starts.
 */
const ROUNDS = Number(process.env.MIGRATION_RACE_ROUNDS ?? 10);
const REPLICAS = 3;
const ROOT = path.resolve(import.meta.dirname, "../..");

describe("migrations with replicas starting together", () => {
  const adminUrl = inject("adminDatabaseUrl");
  let emulator: RunningEmulator;
  let env: Record<string, string>;
  let migrationFiles: number;
  const databases: string[] = [];
  const running: ConnectorProcess[] = [];

  const emptyDatabase = async (label: string) => {
    const name = `scim_migrate_${label}_${process.pid}`;
    await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
    databases.push(name);
    return withDatabase(adminUrl, name);
  };

  beforeAll(async () => {
    emulator = await startEmulator();
    const mappingFile = await writeMappingFile();
    migrationFiles = (await readdir(path.join(ROOT, "migrations"))).filter((f) => /^\d{13}-.*\.ts$/.test(f)).length;
    env = {
      PLATFORM_URL: emulator.url,
      PLATFORM_SCIM_TOKEN: "dev-scim-token",
      PLATFORM_REQUEST_ORIGIN: "migrate-test",
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      RECONCILE_WORKERS: "0",
      RESYNC_CRON: "off",
      LOG_LEVEL: "info",
    };
  });
  afterAll(async () => {
    await Promise.all(running.map((r) => r.kill("SIGKILL")));
    await emulator?.close();
    for (const name of databases) await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it(
    `${REPLICAS} replicas on an empty database, ${ROUNDS} rounds: every migration applied once, every replica ready`,
    { timeout: 900_000 },
    async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const url = await emptyDatabase(`r${round}`);
        const started = await Promise.allSettled(
          Array.from({ length: REPLICAS }, () => spawnConnector({ ...env, DATABASE_URL: url })),
        );
        const replicas = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
        running.push(...replicas);
        expect(
          started.flatMap((s) => (s.status === "rejected" ? [String(s.reason).slice(0, 600)] : [])),
          `round ${round}`,
        ).toEqual([]);
        for (const replica of replicas) expect((await fetch(`${replica.url}/readyz`)).status).toBe(200);
        // Applied once: one row per migration file, and one replica's log names them.
        const rows = await adminQuery<{ name: string; n: number }>(
          url,
          "SELECT name, count(*)::int AS n FROM typeorm_migrations GROUP BY name",
        );
        expect(rows).toHaveLength(migrationFiles);
        expect(rows.filter((r) => r.n !== 1)).toEqual([]);
        expect(replicas.filter((r) => r.output().includes("migrations applied"))).toHaveLength(1);
        await Promise.all(replicas.map((r) => r.kill("SIGTERM")));
        for (const r of replicas) expect(r.child.exitCode, r.output().slice(-1000)).toBe(0);
        await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${databases.pop()!} WITH (FORCE)`);
      }
    },
  );

  it(
    "with MIGRATE_AT_BOOT=false, a replica on an older schema refuses to start and names the fix; after `scim-connector migrate` it starts",
    { timeout: 180_000 },
    async () => {
      const url = await emptyDatabase("job");
      const skipping = { ...env, DATABASE_URL: url, MIGRATE_AT_BOOT: "false" };
      const refused = await spawnConnector(skipping).then(
        () => "started",
        (error: unknown) => String(error),
      );
      expect(refused).toContain("connector exited 78");
      expect(refused).toContain("run `scim-connector migrate`");
      expect(refused).toContain("Foundation1763700000000");
      expect(
        (await adminQuery<{ t: string | null }>(url, "SELECT to_regclass('typeorm_migrations')::text AS t"))[0]!.t,
      ).toBeNull();

      const { stdout } = await promisify(execFile)(
        process.execPath,
        [path.join(ROOT, "bin/scim-connector.js"), "migrate"],
        {
          cwd: ROOT,
          env: { ...process.env, ...skipping, LOG_LEVEL: "error" },
          timeout: 120_000,
        },
      );
      expect(stdout).toContain("Applied: ");
      const replica = await spawnConnector(skipping);
      running.push(replica);
      expect((await fetch(`${replica.url}/readyz`)).status).toBe(200);
      expect(replica.output()).not.toContain("migrations applied");
    },
  );
});

import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { emulatorDump } from "../support/emulator.js";
import { DRAFT_MAPPING } from "../support/mapping.js";
import { ADMIN_TOKEN, IDP_TOKEN, TEST_MAPPING } from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * Two replicas with different mapping files, as in a rollout: the stale one (TEST_MAPPING, which
 * grants Marketing send_campaigns_canvases) does all the reconciling, the newer one (DRAFT_MAPPING,
 * basic_access only) started last and put its file in force. No user is planned with the stale
 * file: the platform holds the mapping in force's grants, and the stale replica says so (log,
 * /readyz, /metrics). When the mapping in force is one it cannot read, it plans nothing.
 */
const USERS = 12;

describe("one mapping in force across replicas", () => {
  let database: TestDatabase;
  let emulator: RunningEmulator;
  let stale: ConnectorProcess;
  const running: ConnectorProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator();
    const dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-mapping-"));
    await writeFile(path.join(dir, "old.yaml"), TEST_MAPPING);
    await writeFile(path.join(dir, "new.yaml"), DRAFT_MAPPING);
    const env = {
      DATABASE_URL: database.url,
      PLATFORM_URL: emulator.url,
      PLATFORM_SCIM_TOKEN: "dev-scim-token",
      PLATFORM_REQUEST_ORIGIN: "mapping-test",
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      RECONCILE_POLL_MS: "100",
      RESYNC_CRON: "off",
      LOG_LEVEL: "warn",
    };
    stale = await spawnConnector({ ...env, MAPPING_FILE: path.join(dir, "old.yaml"), RECONCILE_WORKERS: "2" });
    running.push(stale);
    running.push(
      await spawnConnector({ ...env, MAPPING_FILE: path.join(dir, "new.yaml"), RECONCILE_WORKERS: "0", ROLES: "web" }),
    );
  }, 180_000);
  afterAll(async () => {
    await Promise.all(running.map((r) => r.kill("SIGKILL")));
    await emulator?.close();
    await database?.drop();
  });

  const scim = (method: "post" | "patch", p: string, body: unknown) =>
    request(stale.url)
      [method](`/scim/v2${p}`)
      .set("Authorization", `Bearer ${IDP_TOKEN}`)
      .set("Content-Type", "application/scim+json")
      .send(JSON.stringify(body));
  const createMarketers = async (prefix: string, count: number) => {
    const ids = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const res = await scim("post", "/Users", {
          schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
          userName: `${prefix}${i}@example.com`,
          name: { givenName: `M${i}`, familyName: "Mapping" },
          active: true,
        });
        expect(res.status, res.text).toBe(201);
        return res.body.id as string;
      }),
    );
    const group = await scim("post", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "Marketing",
      members: ids.map((value) => ({ value })),
    });
    expect(group.status, group.text).toBe(201);
    return ids;
  };

  it("the replica whose file is stale plans with the mapping in force, and says so", async () => {
    await createMarketers("m", USERS);
    const queued = async () =>
      ((await database.db.query(`SELECT count(*)::int AS n FROM reconcile_queue`)) as { n: number }[])[0]!.n;
    await eventually(
      "every user reconciled",
      async () => (await queued()) === 0 && (await emulatorDump(emulator.url)).dashboardUsers.length === USERS,
      { timeoutMs: 60_000 },
    );

    const users = (await emulatorDump(emulator.url)).dashboardUsers;
    expect(users.map((u) => u.permissions.appGroup[0]?.appGroupPermissions)).toEqual(
      Array.from({ length: USERS }, () => ["basic_access"]),
    );
    const ready = await request(stale.url).get("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body.mapping.planning).toBe("in force");
    expect(ready.body.mapping.fileVersion).not.toBe(ready.body.mapping.inForceVersion);
    expect((await request(stale.url).get("/metrics")).text).toMatch(/^scim_connector_mapping_file_in_force 0$/m);
    expect(stale.output()).toContain(
      "this replica's mapping file is not the mapping in force; planning with the one in force",
    );
  });

  it("when the mapping in force is one this version cannot read, the stale replica plans nothing and says why", async () => {
    // A newer release's mapping (a key this version does not know) recorded in force.
    await database.db.execute(`UPDATE mapping_state SET hash = 'from-a-newer-release', source_text = $1 WHERE id = 1`, [
      `${DRAFT_MAPPING}\nfutureSetting: true\n`,
    ]);
    const res = await scim("post", "/Users", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: "paused@example.com",
      name: { givenName: "Paused", familyName: "Mapping" },
      active: true,
    });
    expect(res.status).toBe(201);
    // The worker tries to plan it and refuses (its loop logs why, and tries again later).
    await eventually("the worker refusing to plan", async () =>
      stale.output().includes("planning paused until they match"),
    );
    expect(stale.output()).toContain(
      "this replica cannot read the mapping in force; planning paused until its file matches",
    );
    const queued: { n: number }[] = await database.db.query(
      `SELECT count(*)::int AS n FROM reconcile_queue WHERE user_id = $1`,
      [res.body.id],
    );
    expect(queued[0]!.n).toBe(1);
    expect((await emulatorDump(emulator.url)).dashboardUsers.map((u) => u.userName)).not.toContain(
      "paused@example.com",
    );
    expect((await request(stale.url).get("/readyz")).body.mapping.planning).toBe("paused");
    expect((await request(stale.url).get("/metrics")).text).toMatch(/^scim_connector_mapping_planning_paused 1$/m);
  });
});

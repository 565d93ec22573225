import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateMapping } from "../../src/mapping/migrate.js";
import { BASIC_ACCESS_GRANULAR } from "../../src/vocabulary/permissions.js";
import { writeFile } from "node:fs/promises";
import {
  ADMIN_TOKEN,
  adminApi,
  emulatorState,
  idp,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";
import { eventually } from "../support/wait.js";
import { callsSpent, platformCalls } from "../support/emulator.js";

/**
 * The upgrade path of docs/granular-permissions.md, step by step, on the emulator over real HTTP:
 * a legacy company → the platform's migration → legacy refused → held grants with one alert →
 * `mapping migrate` → the switch, 0 calls for unchanged accounts → the held grants applied.
 * Calls are counted on the emulator (its SCIM counters) and in the connector's budget ledger, and
 * the two must agree: a call the ledger missed is one the budget never saw.
 */

const LEGACY_MAPPING = `department: { default: engineering }
rules:
  - description: Marketing
    group: Marketing
    workspaces:
      - name: EU Production
        permissions: [basic_access, send_campaigns_canvases]
        teams:
          - name: Lifecycle
            permissions: [basic_access]
  - description: Analysts
    group: Analysts
    workspaces:
      - name: EU Production
        permissions: [basic_access]
`;

describe("the move to granular permissions, on the platform's timeline", () => {
  let stack: Stack;
  const ids: Record<string, string> = {};
  let marketing: string;

  const calls = () => platformCalls(stack.emulator.url, stack.database.db);
  const platform = (body: object) => request(stack.emulator.url).post("/_emulator/permissions").send(body);
  const account = async (userName: string) =>
    (await emulatorState(stack)).dashboardUsers.find((u) => u.userName === userName);
  const incidents = async () =>
    (await stack.database.db.query(
      `SELECT event, resolved_at FROM notification_incidents WHERE key = 'platform-legacy-refused' ORDER BY opened_at`,
    )) as { event: string; resolved_at: Date | null }[];
  const messages = async () =>
    (
      (await stack.database.db.query(
        `SELECT event FROM notification_outbox WHERE event LIKE 'platform.legacy_refused%' ORDER BY id`,
      )) as { event: string }[]
    ).map((r) => r.event);
  const logOf = async (userName: string) =>
    (await stack.database.db.query(
      `SELECT action, outcome, error, note, calls_spent FROM reconcile_log WHERE user_name = $1 ORDER BY at, id`,
      [userName],
    )) as { action: string; outcome: string; error: string | null; note: string | null; calls_spent: number }[];

  beforeAll(async () => {
    stack = await startStack({ mapping: LEGACY_MAPPING, env: { SCHEDULER_TICK_MS: "100" } });
    const api = idp(stack);
    for (const name of ["ann", "bob", "cem"]) ids[name] = await api.createUser(`${name}@example.com`);
    marketing = await api.createGroup("Marketing", [ids.ann!, ids.bob!]);
    await api.createGroup("Analysts", [ids.cem!]);
    await waitForQueueIdle(stack);
  }, 120_000);
  afterAll(async () => stack?.close());

  it("1. a legacy company: accounts hold legacy strings", async () => {
    expect((await account("ann@example.com"))!.permissions.appGroup[0]!.appGroupPermissions).toEqual([
      "basic_access",
      "send_campaigns_canvases",
    ]);
  });

  it("2. the platform's migration: the platform answers granular, a verifying resync finds no drift", async () => {
    const migrated = await platform({ model: "granular", legacy: "accepted" });
    expect(migrated.status, migrated.text).toBe(200);
    const ann = await account("ann@example.com");
    expect(ann!.permissions.appGroup[0]!.appGroupPermissions).toHaveLength(45);

    const before = await calls();
    const started = await request(stack.service.url)
      .post("/admin/api/resync")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      .send({ verify: true });
    expect(started.status).toBe(202);
    const run = await eventually("the verifying run to finish", async () => {
      const r = (await adminApi(stack)(`/runs/${started.body.runId}`)).body as Record<string, any>;
      return r.status !== "running" && r.progress.verified === 3 && r;
    });
    expect(run).toMatchObject({ status: "succeeded", progress: { verified: 3, drifted: 0 } });
    await waitForQueueIdle(stack);
    // One read per account, on the emulator and in the ledger alike.
    expect(callsSpent(before, await calls())).toEqual({
      emulator: 3,
      byRoute: { "GET /scim/v2/Users/{id}": 3 },
      ledger: 3,
    });
    // It learned the model from the answers, at no cost.
    const overview = await adminApi(stack)("/permissions");
    expect(overview.status, overview.text).toBe(200);
    expect(overview.body).toMatchObject({ mapping: "legacy", platform: "granular", refusing: null });
  });

  it("3-4. legacy refused: a grant is held with one alert, the next one without a call; a reduction goes out", async () => {
    expect((await platform({ model: "granular", legacy: "refused" })).status).toBe(200);
    const api = idp(stack);
    const before = await calls();
    ids.dee = await api.createUser("dee@example.com");
    await api.patch(`/Groups/${marketing}`, [{ op: "add", path: "members", value: [{ value: ids.dee }] }]);
    await waitForQueueIdle(stack);
    ids.eve = await api.createUser("eve@example.com");
    await api.patch(`/Groups/${marketing}`, [{ op: "add", path: "members", value: [{ value: ids.eve }] }]);
    await waitForQueueIdle(stack);

    // One refused POST (dee's); eve's grant was held without spending a call.
    expect(callsSpent(before, await calls())).toEqual({
      emulator: 1,
      byRoute: { "POST /scim/v2/Users": 1 },
      ledger: 1,
    });
    expect(await account("dee@example.com")).toBeUndefined();
    expect((await logOf("eve@example.com")).at(-1)).toMatchObject({
      action: "create",
      outcome: "held",
      calls_spent: 0,
    });
    expect((await logOf("dee@example.com")).at(-1)!.note).toContain("scim-connector mapping migrate");
    expect(await incidents()).toEqual([{ event: "platform.legacy_refused", resolved_at: null }]);
    expect(await messages()).toEqual(["platform.legacy_refused"]);
    const overview = await adminApi(stack)("/permissions");
    expect(overview.body).toMatchObject({ refusing: { value: "basic_access" }, heldGrants: 2 });

    // A reduction is not held: bob leaves Marketing and his account goes (grace 0: a DELETE).
    await api.patch(`/Groups/${marketing}`, [{ op: "remove", path: `members[value eq "${ids.bob}"]` }]);
    await waitForQueueIdle(stack);
    expect(await account("bob@example.com")).toBeUndefined();
  });

  it("5-6. mapping migrate, then the switch: 0 calls for unchanged accounts, the held grants go out", async () => {
    const migrated = migrateMapping(LEGACY_MAPPING);
    expect(migrated.outcome).toBe("migrated");
    if (migrated.outcome !== "migrated") return;
    await writeFile(stack.mappingFile, migrated.text);
    const before = await calls();
    const reload = await stack.service.mappings.reload(stack.service.db);
    expect(reload).toEqual({ ok: true, changed: true });
    await waitForQueueIdle(stack);

    // ann and cem hold in legacy terms what the granular mapping grants: re-based, nothing sent.
    // dee and eve: their held creates, one POST each. Nothing else.
    expect(callsSpent(before, await calls())).toEqual({
      emulator: 2,
      byRoute: { "POST /scim/v2/Users": 2 },
      ledger: 2,
    });
    for (const name of ["ann", "cem"]) {
      const last = (await logOf(`${name}@example.com`)).at(-1)!;
      expect(last).toMatchObject({ action: "update", outcome: "succeeded", calls_spent: 0 });
      expect(last.note).toContain("re-based to granular permissions, nothing sent");
    }
    const dee = await account("dee@example.com");
    expect(dee!.permissions.appGroup[0]!.appGroupPermissions.sort()).toEqual(
      [...BASIC_ACCESS_GRANULAR, "launch_campaigns", "launch_canvases"].sort(),
    );
    expect(await account("eve@example.com")).toBeDefined();
    expect(await incidents()).toEqual([{ event: "platform.legacy_refused", resolved_at: expect.any(Date) }]);
    expect(await messages()).toEqual(["platform.legacy_refused", "platform.legacy_refused.ended"]);
    const overview = await adminApi(stack)("/permissions");
    expect(overview.body).toMatchObject({ mapping: "granular", refusing: null, heldGrants: 0 });
  });

  it("7. a rule change that really changes access costs exactly the accounts it changes", async () => {
    const text = (await import("node:fs/promises")).readFile(stack.mappingFile, "utf8");
    const changed = (await text).replace(
      /(- description: Analysts[\s\S]*?permissions:\n)/,
      "$1          - view_push_settings\n",
    );
    expect(changed).not.toBe(await text);
    await writeFile(stack.mappingFile, changed);
    const before = await calls();
    await stack.service.mappings.reload(stack.service.db);
    await waitForQueueIdle(stack);
    // cem, the one analyst.
    expect(callsSpent(before, await calls())).toEqual({
      emulator: 1,
      byRoute: { "PUT /scim/v2/Users/{id}": 1 },
      ledger: 1,
    });
    expect((await account("cem@example.com"))!.permissions.appGroup[0]!.appGroupPermissions).toContain(
      "view_push_settings",
    );
  });
});

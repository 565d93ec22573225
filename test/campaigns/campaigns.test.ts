import { Writable } from "node:stream";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { startService } from "../../src/service.js";
import { cliActor } from "../../src/cli/commandActor.js";
import { campaignCommand } from "../../src/cli/campaign.js";
import {
  ADMIN_TOKEN,
  adminApi,
  emulatorState,
  IDP_TOKEN,
  idp,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";
import { eventually } from "../support/wait.js";
import { signInLocally } from "../support/adminHarness.js";

/**
 * Access campaigns end to end (docs/access-review.md, "Campaigns"): the items frozen at start, a
 * reviewer's decisions over the JSON API, and a revoke that the platform (the emulator, over real
 * HTTP) loses at once, funded from the reserve with the ordinary budget spent. Workers run for real.
 */

const MAPPING = `
department:
  default: engineering
rules:
  - group: Platform Admins
    companyPermissions: [admin]
  - group: Marketing
    workspaces:
      - name: EU Production
        permissions: [basic_access, send_campaigns_canvases]
  - group: Sales
    workspaces:
      - name: US Production
        permissions: [basic_access, export_user_data]
`;

// 40 calls a day: 36 ordinary, a reserve of 4 (10 %).
const BUDGET = "40";

type Item = {
  id: string;
  userName: string;
  workspace: string | null;
  permission: string;
  reviewer: string;
  scope: string;
};

describe("an access campaign over two workspaces with two reviewers", () => {
  let stack: Stack;
  const groups: Record<string, string> = {};
  const users: Record<string, string> = {};
  let campaignId: string;

  const api = () => ({
    get: (path: string) => adminApi(stack)(path),
    post: (path: string, body: unknown) =>
      request(stack.service.url)
        .post(`/admin/api${path}`)
        .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
        .send(body as object),
  });
  const account = async (userName: string) =>
    (await emulatorState(stack)).dashboardUsers.find((u) => u.userName === userName);
  const workspacePermissions = async (userName: string, workspace: string) =>
    (await account(userName))?.permissions.appGroup.find((w) => w.appGroupName === workspace)?.appGroupPermissions;
  const add = (group: string, userId: string) =>
    idp(stack).patch(`/Groups/${groups[group]}`, [{ op: "add", path: "members", value: [{ value: userId }] }]);
  const remove = (group: string, userId: string) =>
    idp(stack).patch(`/Groups/${groups[group]}`, [{ op: "remove", path: `members[value eq "${userId}"]` }]);

  beforeAll(async () => {
    stack = await startStack({
      mapping: MAPPING,
      env: { PLATFORM_SCIM_DAILY_BUDGET: BUDGET, RECONCILE_POLL_MS: "50" },
      // Every SCIM call the platform receives, with the account it concerns: the budget test counts them.
      emulator: { scimJournal: true },
    });
    for (const name of ["Platform Admins", "Marketing", "Sales"]) groups[name] = await idp(stack).createGroup(name);
    for (const [name, inGroups] of [
      ["alice@example.com", ["Marketing", "Platform Admins"]],
      ["bob@example.com", ["Sales"]],
      ["carol@example.com", ["Marketing", "Sales"]],
    ] as const) {
      users[name] = await idp(stack).createUser(name);
      for (const g of inGroups) await add(g, users[name]);
    }
    await eventually("the three accounts", async () => {
      const held = (await emulatorState(stack)).dashboardUsers;
      return held.length === 3 && held.every((u) => u.permissions.appGroup.length > 0);
    });
    // The account reaches the platform a moment before its log entry is written: the items' appliedAt
    // comes from that entry.
    await waitForQueueIdle(stack);
  });
  afterAll(async () => stack?.close());

  it("starts with its items frozen from the applied states, each reviewer seeing their workspace's", async () => {
    const started = await api().post("/campaigns", {
      name: "Q4 review",
      scope: { kind: "everything" },
      dueAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      reviewers: [
        { name: "eu.owner@example.com", workspace: "EU Production" },
        { name: "us.owner@example.com", workspace: "US Production" },
      ],
      fallbackReviewer: "security@example.com",
    });
    expect(started.status).toBe(201);
    // alice: admin + 2 EU; bob: 2 US; carol: 2 EU + 2 US.
    expect(started.body.items).toBe(9);
    campaignId = started.body.id;

    const eu = await api().get(`/campaigns/${campaignId}/items?as=eu.owner@example.com`);
    expect(eu.status).toBe(200);
    const euItems = eu.body.items as (Item & { rules: { line: number; groups: string[] }[]; appliedAt: string })[];
    expect(euItems).toHaveLength(4);
    expect(new Set(euItems.map((i) => i.workspace))).toEqual(new Set(["EU Production"]));
    expect(euItems[0]!.rules).toEqual([expect.objectContaining({ groups: ["Marketing"] })]);
    expect(euItems.every((i) => i.appliedAt !== null)).toBe(true);
    const us = (await api().get(`/campaigns/${campaignId}/items?as=us.owner@example.com`)).body.items as Item[];
    expect(us.map((i) => `${i.userName} ${i.permission}`).sort()).toEqual([
      "bob@example.com basic_access",
      "bob@example.com export_user_data",
      "carol@example.com basic_access",
      "carol@example.com export_user_data",
    ]);
    const fallback = (await api().get(`/campaigns/${campaignId}/items?as=security@example.com`)).body.items as Item[];
    expect(fallback.map((i) => [i.userName, i.scope, i.permission])).toEqual([
      ["alice@example.com", "company", "admin"],
    ]);

    // Bulk keep of a selection; a revoke without a comment is refused.
    const keep = await api().post(`/campaigns/${campaignId}/decisions`, {
      as: "us.owner@example.com",
      decision: "keep",
      items: us.filter((i) => i.userName === "carol@example.com").map((i) => i.id),
    });
    expect(keep.body).toMatchObject({ decided: 2, decision: "keep" });
    const noComment = await api().post(`/campaigns/${campaignId}/decisions`, {
      as: "us.owner@example.com",
      decision: "revoke",
      items: [us[0]!.id],
    });
    expect(noComment.status).toBe(400);
    expect(noComment.body.message).toMatch(/comment/);
    const detail = (await api().get(`/campaigns/${campaignId}`)).body;
    expect(detail.counts).toMatchObject({ items: 9, kept: 2, revoked: 0, open: 7 });
  });

  it("a revoke reaches the platform in under a second with the ordinary budget spent", async () => {
    // Spend the ordinary budget: more creates than it allows, so some wait for tomorrow.
    for (let i = 0; i < 40; i++) {
      const id = await idp(stack).createUser(`filler${i}@example.com`);
      await add("Marketing", id);
    }
    await eventually("the ordinary budget spent", async () => (await api().get("/budget")).body.remaining === 0);
    expect((await api().get("/queue")).body.total).toBeGreaterThan(0);

    const eu = (await api().get(`/campaigns/${campaignId}/items?as=eu.owner@example.com&user=alice`)).body
      .items as Item[];
    const item = eu.find((i) => i.permission === "send_campaigns_canvases")!;
    expect(await workspacePermissions("alice@example.com", "EU Production")).toContain("send_campaigns_canvases");
    const reserveBefore = (await api().get("/budget")).body.remainingWithReserve as number;
    const journal = stack.emulator.state.scimJournal!;
    const callsBefore = journal.length;
    const sent = Date.now();
    const decided = await api().post(`/campaigns/${campaignId}/decisions`, {
      as: "eu.owner@example.com",
      decision: "revoke",
      comment: "moved to the data team",
      items: [item.id],
    });
    expect(decided.body).toMatchObject({ decided: 1, decision: "revoke" });
    await eventually(
      "the revoke on the platform",
      async () =>
        !(await workspacePermissions("alice@example.com", "EU Production"))?.includes("send_campaigns_canvases"),
      { timeoutMs: 10_000, intervalMs: 10 },
    );
    const tookMs = Date.now() - sent;
    console.log(`campaign revoke reached the emulator in ${tookMs} ms (ordinary budget spent)`);
    expect(tookMs).toBeLessThan(1000);
    expect(await workspacePermissions("alice@example.com", "EU Production")).toEqual(["basic_access"]);
    // Funded from the reserve: the ordinary budget stays spent, and the reserve fell by exactly the
    // calls the platform received since the decision (each is debited before it is sent): one PUT
    // of alice's account. Any other call in the window is named here, by method and account.
    const after = (await api().get("/budget")).body;
    const calls = journal.slice(callsBefore).map((c) => `${c.method} ${c.userName}`);
    expect(calls).toEqual(["PUT alice@example.com"]);
    expect(after.remaining).toBe(0);
    expect(reserveBefore - after.remainingWithReserve).toBe(calls.length);

    // Shown, logged in words and notified.
    const denies = (await api().get(`/denies?user=${users["alice@example.com"]}`)).body.denies;
    expect(denies).toMatchObject([
      {
        grant: "send_campaigns_canvases in EU Production",
        words: expect.stringMatching(/^revoked in campaign "Q4 review", by admin-api as eu\.owner@example\.com, on /),
        endedAt: null,
      },
    ]);
    const log = (await api().get(`/log?user=alice@example.com&limit=20`)).body.entries as {
      action: string;
      error: string | null;
      note: string | null;
      callsSpent: number;
    }[];
    expect(log.find((e) => e.action === "revoke")).toMatchObject({ error: null });
    expect(log.find((e) => e.action === "revoke")?.note).toBe(
      'send_campaigns_canvases in EU Production revoked in campaign "Q4 review" by admin-api as eu.owner@example.com: moved to the data team',
    );
    const agent = request.agent(stack.service.url);
    await signInLocally(agent);
    const page = await agent.get(`/admin/users/${users["alice@example.com"]}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(
      "send_campaigns_canvases in EU Production: revoked in campaign &quot;Q4 review&quot;, by admin-api as eu.owner@example.com, on ",
    );
    const [notification] = await stack.database.db.query<{ summary: string; details: { groups: string[] } }>(
      `SELECT summary, details FROM notification_outbox WHERE event = 'campaign.revoked'`,
    );
    expect(notification?.details.groups).toEqual(["Marketing"]);
  });

  it("the deny survives a restart and a full resync", async () => {
    await stack.service.close();
    stack.service = await startService({
      env: loadEnv({
        PORT: "0",
        HOST: "127.0.0.1",
        SCIM_TOKEN: IDP_TOKEN,
        ADMIN_TOKEN,
        MAPPING_FILE: stack.mappingFile,
        RECONCILE_POLL_MS: "50",
        RECONCILE_SETTLE_MS: "0",
        RECONCILE_DEPROVISION_GRACE_MS: "0",
        PLATFORM_SCIM_DAILY_BUDGET: BUDGET,
      }),
      databaseUrl: stack.database.url,
      platform: { url: stack.emulator.url, scimToken: "dev-scim-token", apiKey: "dev-api-key", requestOrigin: "t" },
    });
    const run = await api().post("/resync", {});
    expect(run.status).toBe(202);
    await eventually(
      "the resync planned",
      async () => (await api().get(`/runs/${run.body.runId}`)).body.status === "succeeded",
    );
    // The resync plans the fillers' creates (waiting for budget), but no update: it honours the deny too.
    const planned = (await api().get(`/runs/${run.body.runId}`)).body.plan as Record<string, number>;
    expect(planned.create).toBeGreaterThan(0);
    expect(planned.update ?? 0).toBe(0);
    // Reconcile alice now: with the deny honoured, nothing is to be done.
    const now = await api().post(`/users/${users["alice@example.com"]}/reconcile`, {});
    expect(now.status).toBe(200);
    expect(await workspacePermissions("alice@example.com", "EU Production")).toEqual(["basic_access"]);
    expect((await api().get(`/denies?user=${users["alice@example.com"]}&active=true`)).body.denies).toHaveLength(1);
  });

  it("when the IdP drops the group, the deny ends by itself, logged", async () => {
    await remove("Marketing", users["alice@example.com"]!);
    await eventually(
      "the deny ended",
      async () => (await api().get(`/denies?user=${users["alice@example.com"]}`)).body.denies[0]?.endedAt,
    );
    const [deny] = (await api().get(`/denies?user=${users["alice@example.com"]}`)).body.denies;
    expect(deny).toMatchObject({ endReason: "idp-no-longer-grants", endedBy: null });
    const log = (await api().get(`/log?user=alice@example.com&limit=20`)).body.entries as {
      action: string;
      note: string | null;
    }[];
    expect(log.find((e) => e.action === "deny-ended")?.note).toMatch(
      /^deny ended: the IdP no longer grants send_campaigns_canvases in EU Production \(revoked in campaign "Q4 review" by admin-api as eu\.owner@example\.com on /,
    );
    await eventually(
      "EU Production removed",
      async () => !(await workspacePermissions("alice@example.com", "EU Production")),
    );
    expect((await api().get(`/denies?user=${users["alice@example.com"]}&active=true`)).body.denies).toEqual([]);
  });

  it("the CLI lists, shows a reviewer's items and decides them, as the API does", async () => {
    const cli = async (...args: string[]) => {
      let text = "";
      const out = new Writable({
        write(chunk: Buffer, _enc, done) {
          text += chunk.toString();
          done();
        },
      });
      await campaignCommand(loadEnv({ MAPPING_FILE: stack.mappingFile }), stack.database.db, args, out);
      return JSON.parse(text);
    };
    const list = await cli("list");
    expect(list).toMatchObject([{ id: campaignId, status: "open", counts: { items: 9, kept: 2, revoked: 1 } }]);
    const shown = await cli("show", campaignId, "--as", "us.owner@example.com", "--open");
    expect(shown.items.map((i: Item) => i.userName)).toEqual(["bob@example.com", "bob@example.com"]);
    const decided = await cli("decide", campaignId, "keep", shown.items[0].id, "--as", "us.owner@example.com");
    expect(decided).toMatchObject({ decided: 1, decision: "keep" });
    const items = (await api().get(`/campaigns/${campaignId}/items?as=us.owner@example.com&decision=keep`)).body
      .items as (Item & { decidedBy: string })[];
    expect(items.find((i) => i.id === shown.items[0].id)?.decidedBy).toBe(
      `${cliActor(undefined)} as us.owner@example.com`,
    );
    await expect(
      cli("decide", campaignId, "revoke", shown.items[1].id, "--as", "us.owner@example.com"),
    ).rejects.toThrow(/comment/);
  });

  it("closes, reporting undecided items as kept; a closed campaign takes no decision", async () => {
    const closed = await api().post(`/campaigns/${campaignId}/close`, {});
    expect(closed.body).toMatchObject({
      status: "closed",
      closeSummary: { kept: 3, revoked: 1, undecided: 5, undecidedAction: "keep" },
    });
    const late = await api().post(`/campaigns/${campaignId}/decisions`, {
      decision: "keep",
      items: ["1"],
    });
    expect(late.status).toBe(409);
    expect((await api().get(`/campaigns/not-a-campaign`)).status).toBe(404);
  });
});

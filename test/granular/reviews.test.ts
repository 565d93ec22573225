import { generateKeyPairSync } from "node:crypto";
import { PassThrough } from "node:stream";
import request from "supertest";
import tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEvidencePack } from "../../src/review/evidence/pack.js";
import { signInLocally } from "../support/adminHarness.js";
import { BASIC_ACCESS_GRANULAR } from "../../src/vocabulary/permissions.js";
import { adminApi, ADMIN_TOKEN, emulatorState, idp, startStack, type Stack } from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * Reviews stay readable under the granular model (issue 33, item 7), end to end: a granular mapping
 * gives a role, a permission set and the 45 strings of one legacy `basic_access` +
 * `send_campaigns_canvases`. The access review and a campaign show them as 3 grants (one for the 45
 * strings), and revoking that one removes all 45 from the platform (the emulator, over real HTTP)
 * and keeps the role and the set. Workers run for real.
 */

const FORTY_FIVE = [...BASIC_ACCESS_GRANULAR, "launch_campaigns", "launch_canvases"];

const MAPPING = `
permissionModel: granular
department:
  default: engineering
rules:
  - group: Marketing
    description: EU marketers
    roles: [Marketer]
    workspaces:
      - name: EU Production
        permissions: [${FORTY_FIVE.join(", ")}]
      - name: US Production
        permissionSets: [Analysts]
`;

type Row = {
  userName: string;
  scope: string;
  workspace: string | null;
  permission: string;
  bundle?: string[];
  permissions: string[];
  count: number;
  reasons: { rule?: { line: number } }[];
  deny: { onPlatform: boolean; words: string } | null;
};
type Item = {
  id: string;
  scope: string;
  workspace: string | null;
  permission: string;
  bundle: string[] | null;
  permissions: string[];
  count: number;
  grant: string;
};

/** A CSV file's rows as header → cell (the exports quote every cell, the header maybe; none here holds `","`). */
const csvRows = (text: string): Record<string, string>[] => {
  const cellsOf = (line: string) => (line.startsWith('"') ? line.slice(1, -1).split('","') : line.split(","));
  const [header, ...lines] = text.trim().split("\r\n");
  const columns = cellsOf(header!);
  return lines.map((l) => Object.fromEntries(columns.map((c, i) => [c, cellsOf(l)[i]!])));
};

/** The evidence pack for [from, to], its files by path. */
async function evidenceFiles(stack: Stack, from: Date, to: Date): Promise<Map<string, string>> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on("data", (c: Buffer) => chunks.push(c));
  const { privateKey } = generateKeyPairSync("ed25519");
  await writeEvidencePack({ db: stack.service.db, signingKey: privateKey, now: () => new Date() }, { from, to }, out);
  const files = new Map<string, string>();
  const extract = tar.extract();
  extract.end(Buffer.concat(chunks));
  for await (const entry of extract) {
    const parts: Buffer[] = [];
    for await (const c of entry as AsyncIterable<Buffer>) parts.push(c);
    files.set(entry.header.name, Buffer.concat(parts).toString("utf8"));
  }
  return files;
}

const controlPost = async (stack: Stack, path: string, body: unknown) => {
  const res = await fetch(`${stack.emulator.url}/_emulator${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`emulator ${path}: ${res.status} ${await res.text()}`);
};

describe("a granular user's access review and campaign: one grant per rule and workspace, not per string", () => {
  let stack: Stack;
  let campaignId: string;
  let userId: string;

  const post = (path: string, body: unknown) =>
    request(stack.service.url)
      .post(`/admin/api${path}`)
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      .send(body as object);
  const account = async () => (await emulatorState(stack)).dashboardUsers.find((u) => u.userName === "ann@example.com");
  const review = async () => (await adminApi(stack)("/access?user=ann@example.com&limit=1000")).body.rows as Row[];

  beforeAll(async () => {
    stack = await startStack({ mapping: MAPPING, env: { RECONCILE_POLL_MS: "50" } });
    // The company is migrated: granular strings, its role and permission set in the directory.
    await controlPost(stack, "/permissions", { model: "granular", legacy: "accepted" });
    await controlPost(stack, "/fixtures", {
      roles: [{ roleName: "Marketer" }],
      permissionSets: [{ name: "Analysts", permissions: ["view_campaigns", "view_segments"] }],
    });
    userId = await idp(stack).createUser("ann@example.com");
    await idp(stack).createGroup("Marketing", [userId]);
    await eventually("ann's account with the 45 strings, the role and the set", async () => {
      const held = await account();
      const eu = held?.permissions.appGroup.find((w) => w.appGroupName === "EU Production");
      return eu?.appGroupPermissions.length === 45;
    });
    // The connector records the applied state, then the log entry with its reasons: wait for both.
    await eventually("the create logged with its reasons", async () => {
      const [logged] = await stack.database.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM reconcile_log WHERE user_name = 'ann@example.com' AND action = 'create'
            AND outcome = 'succeeded' AND reasons IS NOT NULL`,
      );
      return logged!.n === 1;
    });
  });
  afterAll(async () => stack?.close());

  it("the access review shows 3 grants beside the department: the role, the set, and the 45 strings as one", async () => {
    const rows = await review();
    expect(rows.map((r) => [r.scope, r.workspace, r.permission, r.count])).toEqual([
      ["role", null, "Marketer", 1],
      ["workspace", "EU Production", "rule 'EU marketers'", 45],
      ["permissionSet", "US Production", "Analysts", 1],
      ["department", null, "engineering", 0],
    ]);
    const eu = rows[1]!;
    expect([...eu.permissions].sort()).toEqual([...FORTY_FIVE].sort());
    expect(eu.bundle).toEqual(eu.permissions);
    expect(eu.reasons).toEqual([expect.objectContaining({ rule: expect.objectContaining({ line: 6 }) })]);
    // As of a moment: the same grants, from the reasons the reconciler stored when it applied them.
    const asOf = (
      await adminApi(stack)(`/access?user=ann@example.com&at=${encodeURIComponent(new Date().toISOString())}`)
    ).body.rows as (Row & { reasonsAsOf: string })[];
    expect(asOf.map((r) => [r.permission, r.count, r.reasonsAsOf])).toEqual([
      ["Marketer", 1, "applied"],
      ["rule 'EU marketers'", 45, "applied"],
      ["Analysts", 1, "applied"],
      ["engineering", 0, "applied"],
    ]);
    // A filter on one of its strings finds the bundle.
    const filtered = (await adminApi(stack)("/access?user=ann@example.com&permission=launch_canvases")).body
      .rows as Row[];
    expect(filtered.map((r) => r.permission)).toEqual(["rule 'EU marketers'"]);

    // The CSV export: one line per grant, with the strings it gives and their count.
    const csv = csvRows((await adminApi(stack)("/access?format=csv&user=ann@example.com")).text);
    expect(csv.map((r) => [r.permission, r.count])).toEqual([
      ["Marketer", "1"],
      ["rule 'EU marketers'", "45"],
      ["Analysts", "1"],
      ["engineering", "0"],
    ]);
    expect(csv[1]!.permissions!.split(" ").sort()).toEqual([...FORTY_FIVE].sort());
  });

  it("a campaign over everything has those 3 items (not 45 and more), the 45 strings in words as one", async () => {
    const started = await post("/campaigns", {
      name: "Granular review",
      scope: { kind: "everything" },
      dueAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      fallbackReviewer: "security@example.com",
    });
    expect(started.status).toBe(201);
    expect(started.body.items).toBe(3);
    campaignId = started.body.id;
    const items = (await adminApi(stack)(`/campaigns/${campaignId}/items?as=security@example.com`)).body
      .items as Item[];
    expect(items.map((i) => [i.scope, i.workspace, i.permission, i.count])).toEqual([
      ["role", null, "Marketer", 1],
      ["workspace", "EU Production", "rule 'EU marketers'", 45],
      ["permissionSet", "US Production", "Analysts", 1],
    ]);
    const eu = items[1]!;
    expect([...eu.bundle!].sort()).toEqual([...FORTY_FIVE].sort());
    expect(eu.grant).toBe(
      "45 permissions in EU Production from rule 'EU marketers': view_campaigns, edit_campaigns, archive_campaigns, …",
    );
    expect(items[0]!.grant).toBe("role Marketer");
    // Filtering a campaign's items by one string finds the bundle that holds it.
    const byString = (
      await adminApi(stack)(`/campaigns/${campaignId}/items?as=security@example.com&permission=use_operator`)
    ).body.items as Item[];
    expect(byString.map((i) => i.id)).toEqual([eu.id]);
    // So does a campaign scoped to one string: the bundle that holds it is its one item.
    const scoped = await post("/campaigns", {
      name: "Operators",
      scope: { kind: "permission", permission: "use_operator" },
      dueAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      fallbackReviewer: "security@example.com",
    });
    expect(scoped.body.items).toBe(1);

    // The pages: one line for the 45 strings, folded under it.
    const agent = request.agent(stack.service.url);
    await signInLocally(agent);
    const page = (await agent.get(`/admin/campaigns/${campaignId}?reviewer=all`)).text;
    expect(page.match(/<tr>/g)).toHaveLength(1 + 3); // the header row and 3 items
    expect(page).toContain("45 permissions in EU Production from rule");
    expect(page).toContain("<summary>all 45</summary>");
    const access = (await agent.get("/admin/access?user=ann")).text;
    expect(access).toMatch(/<summary>45 permissions from rule .EU marketers.<\/summary>/);
  });

  it("a log entry that stored its reasons string by string still gives one item per rule and workspace", async () => {
    const db = stack.database.db;
    const [entry] = await db.query<{ id: string; reasons: unknown }>(
      `SELECT id, reasons FROM reconcile_log WHERE user_name = 'ann@example.com' AND action IN ('create', 'update')
          AND outcome = 'succeeded' ORDER BY at DESC, id DESC LIMIT 1`,
    );
    // The bundles taken apart, one element per string, as a per-string entry would hold them.
    await db.query(
      `UPDATE reconcile_log l SET reasons = (
         SELECT jsonb_agg(CASE WHEN e ? 'bundle' THEN (e - 'bundle') || jsonb_build_object('permission', p) ELSE e END)
           FROM jsonb_array_elements(l.reasons) e
           CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN e ? 'bundle' THEN e->'bundle' ELSE '[""]' END) p)
        WHERE id = $1`,
      [entry!.id],
    );
    try {
      const started = await post("/campaigns", {
        name: "Per-string reasons",
        scope: { kind: "everything" },
        dueAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
        fallbackReviewer: "security@example.com",
      });
      expect(started.body.items).toBe(3);
      const items = (await adminApi(stack)(`/campaigns/${started.body.id}/items?as=security@example.com`)).body
        .items as (Item & { rules: { line: number }[] })[];
      const eu = items.find((i) => i.bundle)!;
      // Grouped by the first rule of each string's reasons; the entry stored no bundle name.
      expect([eu.permission, eu.count, eu.rules.map((r) => r.line)]).toEqual(["rule #1", 45, [6]]);
    } finally {
      await db.query(`UPDATE reconcile_log SET reasons = $2 WHERE id = $1`, [
        entry!.id,
        JSON.stringify(entry!.reasons),
      ]);
    }
  });

  it("revoking the 45-string grant takes all 45 off the platform and keeps the role and the set", async () => {
    const items = (await adminApi(stack)(`/campaigns/${campaignId}/items?as=security@example.com`)).body
      .items as Item[];
    const eu = items.find((i) => i.bundle)!;
    const decided = await post(`/campaigns/${campaignId}/decisions`, {
      as: "security@example.com",
      decision: "revoke",
      comment: "moved to the data team",
      items: [eu.id],
    });
    expect(decided.body).toMatchObject({ decided: 1, decision: "revoke" });
    await eventually(
      "the 45 strings off the platform",
      async () => !(await account())?.permissions.appGroup.some((w) => w.appGroupName === "EU Production"),
      { timeoutMs: 10_000 },
    );
    const held = (await account())!;
    expect(held.permissions.roles?.map((r) => r.roleName)).toEqual(["Marketer"]);
    expect(held.permissions.appGroup).toEqual([
      expect.objectContaining({
        appGroupName: "US Production",
        appGroupPermissionSets: [expect.objectContaining({ appGroupPermissionSetName: "Analysts" })],
      }),
    ]);

    // One deny per string, read as one: the denies' list and the log name the bundle.
    const [{ n }] = await stack.database.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM access_denies WHERE part_of = 'rule ''EU marketers''' AND ended_at IS NULL`,
    );
    expect(n).toBe(45);
    const denies = (await adminApi(stack)(`/denies?user=${userId}`)).body.denies as (Item & { words: string })[];
    expect(denies).toHaveLength(1);
    expect(denies[0]).toMatchObject({ count: 45, grant: eu.grant, permission: "rule 'EU marketers'" });
    const log = (await adminApi(stack)("/log?user=ann@example.com&limit=20")).body.entries as {
      action: string;
      note: string | null;
    }[];
    expect(log.find((e) => e.action === "revoke")?.note).toBe(
      `${eu.grant} revoked in campaign "Granular review" by admin-api as security@example.com: moved to the data team`,
    );
    // The chained decision records the strings it revoked.
    const [decision] = await stack.database.db.query<{ bundle: string[] }>(
      `SELECT bundle FROM campaign_decisions WHERE item_id = $1`,
      [eu.id],
    );
    expect([...decision!.bundle].sort()).toEqual([...FORTY_FIVE].sort());

    // The review shows the revoked bundle as one row, kept off the platform by the deny (once the
    // connector has logged what the platform now holds).
    await eventually("the revoke applied and logged", async () => {
      const [logged] = await stack.database.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM reconcile_log WHERE user_name = 'ann@example.com' AND action = 'update'
            AND outcome = 'succeeded' AND NOT after->'workspaces' @> '[{"appGroupName": "EU Production"}]'`,
      );
      return logged!.n === 1 && !(await review()).some((r) => r.deny?.onPlatform);
    });
    const rows = await review();
    expect(rows.map((r) => [r.scope, r.permission, r.count, r.deny?.onPlatform ?? null])).toEqual([
      ["role", "Marketer", 1, null],
      ["permissionSet", "Analysts", 1, null],
      ["department", "engineering", 0, null],
      ["workspace", "rule 'EU marketers'", 45, false],
    ]);

    // The evidence pack: one decision for the 45 strings, and one access row for them at the end.
    const files = await evidenceFiles(stack, new Date(Date.now() - 3_600_000), new Date());
    const decisions = csvRows(files.get("campaigns/decisions.csv")!);
    expect(decisions.map((d) => [d.userName, d.decision, d.grant, d.count])).toEqual([
      ["ann@example.com", "revoke", eu.grant, "45"],
    ]);
    expect(decisions[0]!.permissions!.split(" ").sort()).toEqual([...FORTY_FIVE].sort());
    const atEnd = csvRows(files.get("access/access-at-end.csv")!).filter((r) => r.userName === "ann@example.com");
    expect(atEnd.map((r) => [r.scope, r.permission, r.count])).toEqual([
      ["role", "Marketer", "1"],
      ["permissionSet", "Analysts", "1"],
      ["department", "engineering", "0"],
      ["workspace", "rule 'EU marketers'", "45"],
    ]);

    // Lifting the deny lifts the bundle: the 45 strings come back.
    const lifted = await post(`/denies/${denies[0]!.id}/lift`, {});
    expect(lifted.status).toBe(200);
    expect(lifted.body).toMatchObject({ count: 45, endReason: "lifted" });
    await eventually(
      "the 45 strings back on the platform",
      async () =>
        (await account())?.permissions.appGroup.find((w) => w.appGroupName === "EU Production")?.appGroupPermissions
          .length === 45,
      { timeoutMs: 10_000 },
    );
  });
});

import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessRows } from "../../src/review/access/report.js";
import { ManualClock } from "../../src/clock.js";
import { adminApi, emulatorState, idp, startStack, type Stack } from "../support/stack.js";
import { waitForQueueIdle } from "../support/queue.js";
import { ACCESS_MAPPING } from "../support/accessMapping.js";

/**
 * The access report against the emulator over HTTP: each grant with every rule that gives it,
 * and the report today and as of yesterday equal to what the platform held at those moments
 * (the emulator's state captured then), each with the rules and groups that gave it at that
 * moment. The clock is a ManualClock moved a day forward.
 */

type Row = {
  userName: string;
  scope: string;
  workspace: string | null;
  team: string | null;
  permission: string;
  reasons: { rule?: { description: string; line: number; file: string }; groups?: string[]; groupIds?: string[] }[];
  reasonsAsOf: "applied" | "current";
  firstAppliedAt: string | null;
};
type PlatformState = Awaited<ReturnType<typeof emulatorState>>;

/** What the platform holds, as report keys (user, scope, workspace, team, permission). */
function platformGrants(state: PlatformState): string[] {
  const keys: string[] = [];
  for (const u of state.dashboardUsers) {
    const user = u.userName.toLowerCase();
    for (const p of u.permissions.companyPermissions) keys.push(JSON.stringify([user, "company", null, null, p]));
    for (const ws of u.permissions.appGroup) {
      for (const p of ws.appGroupPermissions) keys.push(JSON.stringify([user, "workspace", ws.appGroupName, null, p]));
      for (const t of ws.team)
        for (const p of t.teamPermissions) keys.push(JSON.stringify([user, "team", ws.appGroupName, t.teamName, p]));
    }
    keys.push(JSON.stringify([user, "department", null, null, u.department]));
  }
  return keys.sort();
}

/** The cells of an exported CSV line, every one of which is quoted (none here holds a quote). */
const cells = (line: string) => line.slice(1, -1).split('","');

const reportGrants = (rows: Row[]) =>
  rows.map((r) => JSON.stringify([r.userName.toLowerCase(), r.scope, r.workspace, r.team, r.permission])).sort();

describe("access report against the emulator", () => {
  let stack: Stack;
  const clock = new ManualClock();
  let yesterday: Date;
  let platformYesterday: PlatformState;
  let platformToday: PlatformState;
  let admins: string;
  let support: string;

  /** Every page of the report, following the cursor. */
  async function wholeReport(query: string): Promise<Row[]> {
    const rows: Row[] = [];
    let cursor: string | null = null;
    do {
      const res = await adminApi(stack)(`/access?limit=3${query}${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      rows.push(...(res.body.rows as Row[]));
      cursor = res.body.nextCursor;
    } while (cursor);
    return rows;
  }

  /** `scim-connector access-report <args>` as an operator runs it, on this stack's database. */
  function accessReport(...args: string[]) {
    const root = path.resolve(import.meta.dirname, "../..");
    return promisify(execFile)(process.execPath, [path.join(root, "bin/scim-connector.js"), "access-report", ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: stack.database.url, MAPPING_FILE: stack.mappingFile, LOG_LEVEL: "error" },
    });
  }

  beforeAll(async () => {
    stack = await startStack({ clock, mapping: ACCESS_MAPPING() });
    const api = idp(stack);
    const [ann, bob, cid] = [
      await api.createUser("ann@example.com"),
      await api.createUser("bob@example.com"),
      await api.createUser("cid@example.com"),
    ];
    admins = await api.createGroup("Platform Admins", [cid]);
    await api.createGroup("Marketing", [ann, bob]);
    support = await api.createGroup("Support", [ann, bob]);
    await waitForQueueIdle(stack, { deferred: "wait" });
    platformYesterday = await emulatorState(stack);
    yesterday = clock.now();

    clock.advance(24 * 3_600_000);
    // A mapping change (marketers lose send_campaigns_canvases; the administrators' rule is renamed and moved
    // from line 5 to line 24) and a group removal (bob leaves Support).
    await writeFile(stack.mappingFile, ACCESS_MAPPING("basic_access", true));
    expect((await stack.service.mappings.reload(stack.service.db)).ok).toBe(true);
    await api.patch(`/Groups/${support}`, [{ op: "remove", path: `members[value eq "${bob}"]` }]);
    await waitForQueueIdle(stack, { deferred: "wait" });
    platformToday = await emulatorState(stack);
  }, 90_000);
  afterAll(async () => stack?.close());

  it("lists both rules, with their groups, file and line, when two rules give one permission", async () => {
    const rows = (await wholeReport("&user=ann@example.com&workspace=EU%20Production&permission=basic_access")).filter(
      (r) => r.scope === "workspace",
    );
    expect(rows).toHaveLength(1);
    const reasons = rows[0]!.reasons.map((r) => [r.rule?.description, r.rule?.line, r.groups]);
    expect(reasons).toEqual([
      ["EU marketers", 8, ["Marketing"]],
      ["Support agents", 17, ["Support"]],
    ]);
    expect(rows[0]!.reasons[0]!.rule!.file).toBe(stack.mappingFile);
    // Held without a break since yesterday, though today's mapping change re-applied the account.
    expect(new Date(rows[0]!.firstAppliedAt!).getTime()).toBeLessThanOrEqual(yesterday.getTime());
  });

  it("today's report is what the platform holds now", async () => {
    expect(platformGrants(platformToday)).not.toEqual(platformGrants(platformYesterday));
    expect(reportGrants(await wholeReport(""))).toEqual(platformGrants(platformToday));
  });

  it("the report as of yesterday is what the platform held then, rebuilt from the log", async () => {
    const rows = await wholeReport(`&at=${encodeURIComponent(yesterday.toISOString())}`);
    expect(reportGrants(rows)).toEqual(platformGrants(platformYesterday));
  });

  it("exports the report as CSV (text/csv) and as a JSON file, filtered, as of a date", async () => {
    const csv = await adminApi(stack)(
      `/access?format=csv&workspace=US%20Production&at=${encodeURIComponent(yesterday.toISOString())}`,
    );
    expect(csv.status).toBe(200);
    expect(csv.headers["content-type"]).toMatch(/^text\/csv/);
    const lines = csv.text.trim().split("\r\n");
    expect(lines[0]).toBe(
      "userName,scope,workspace,team,permission,groups,rules,permissions,count,lastSignInAt,suspended,grantedOutside,firstAppliedAt,appliedByLogId,verified,reasonsAsOf,denied",
    );
    // No grant is denied here: the added `denied` column is empty on every row.
    expect(new Set(lines.slice(1).map((l) => cells(l).slice(-2).join("|")))).toEqual(new Set(["applied|"]));
    // A legacy state keeps one row per string: each row's `permissions` is its one string.
    expect(lines.slice(1).map((l) => cells(l).slice(7, 9))).toEqual(lines.slice(1).map((l) => [cells(l)[4], "1"]));
    // Yesterday both ann and bob were in Support; today only ann is.
    expect(
      lines
        .slice(1)
        .map((l) => cells(l)[0])
        .sort(),
    ).toEqual(["ann@example.com", "bob@example.com"]);
    const json = await adminApi(stack)(`/access?format=json&workspace=US%20Production`);
    expect(json.headers["content-disposition"]).toMatch(/attachment; filename="access-report-.*\.json"/);
    expect((JSON.parse(json.text) as Row[]).map((r) => r.userName)).toEqual(["ann@example.com"]);
  });

  it("filters admins everywhere and totals per workspace × permission", async () => {
    expect((await wholeReport("&admins=true")).map((r) => [r.userName, r.scope, r.permission])).toEqual([
      ["cid@example.com", "company", "admin"],
    ]);
    const totals = (await adminApi(stack)("/access/totals")).body.totals as {
      workspace: string | null;
      permission: string;
      users: number;
    }[];
    expect(totals).toContainEqual({ workspace: "EU Production", permission: "basic_access", users: 2 });
    expect(totals).toContainEqual({ workspace: "US Production", permission: "basic_access", users: 1 });
    expect(totals).toContainEqual({ workspace: null, permission: "admin", users: 1 });
  });

  it("scim-connector access-report prints the same report as of a date, as CSV on stdout", async () => {
    const { stdout } = await accessReport("--at", yesterday.toISOString(), "--workspace", "US Production");
    const lines = stdout.trim().split("\r\n");
    expect(
      lines
        .slice(1)
        .map((l) => cells(l).slice(0, 5).join(","))
        .sort(),
    ).toEqual([
      "ann@example.com,workspace,US Production,,basic_access",
      "bob@example.com,workspace,US Production,,basic_access",
    ]);
  });

  it('docs/access-review.md\'s "who had admin" command, run as written, lists the company admin', async () => {
    const doc = await readFile(path.resolve(import.meta.dirname, "../../docs/access-review.md"), "utf8");
    const command = /^ *(?:npx )?(scim-connector access-report --at \S+ --format csv \| grep .*)$/m.exec(doc)?.[1];
    expect(command).toBeDefined();
    // The only substitutions: the CLI's path, and yesterday (when cid was the one admin) for the doc's date.
    const bin = `${process.execPath} ${path.resolve(import.meta.dirname, "../../bin/scim-connector.js")}`;
    const script = command!.replace("scim-connector", bin).replace(/--at \S+/, `--at ${yesterday.toISOString()}`);
    const { stdout } = await promisify(execFile)("bash", ["-o", "pipefail", "-c", script], {
      env: { ...process.env, DATABASE_URL: stack.database.url, MAPPING_FILE: stack.mappingFile, LOG_LEVEL: "error" },
    });
    const rows = stdout.trim().split("\r\n").map(cells);
    expect(rows.map((row) => [row[0], row[1], row[4]])).toEqual([["cid@example.com", "company", "admin"]]);
  });

  it("scim-connector access-report refuses a time without its offset, which it would read in the machine's zone", async () => {
    await expect(accessReport("--at", "2026-06-30T12:00")).rejects.toMatchObject({
      stderr: expect.stringContaining("a time with its offset") as unknown,
      stdout: "",
    });
  });

  it("filters by IdP group, team and rule", async () => {
    const grant = (r: Row) => `${r.userName} ${r.scope} ${r.workspace ?? ""} ${r.permission}`;
    expect((await wholeReport("&group=support")).map(grant)).toEqual([
      "ann@example.com workspace EU Production basic_access",
      "ann@example.com workspace EU Production view_user_profile",
      "ann@example.com workspace US Production basic_access",
    ]);
    expect((await wholeReport("&team=Lifecycle")).map(grant)).toEqual([
      "ann@example.com team EU Production basic_access",
      "bob@example.com team EU Production basic_access",
    ]);
    expect((await wholeReport("&rule=administrators")).map(grant)).toEqual(["cid@example.com company  admin"]);
  });

  it("exports in batches (one account per batch here) the same grants as the pages, now and as of yesterday", async () => {
    const options = { db: stack.service.db, desired: stack.service.desired };
    for (const at of [undefined, yesterday]) {
      const exported: Row[] = [];
      for await (const batch of accessRows(options, at ? { at } : {}, 1)) exported.push(...(batch as unknown as Row[]));
      expect(reportGrants(exported)).toEqual(platformGrants(at ? platformYesterday : platformToday));
    }
  });

  it("as of yesterday, each grant has the rules and groups that gave it then; today, today's", async () => {
    const why = (rows: Row[], user: string, scope: string, workspace: string | null, permission: string) => {
      const row = rows.find(
        (r) => r.userName === user && r.scope === scope && r.workspace === workspace && r.permission === permission,
      );
      return (
        row && [row.reasonsAsOf, row.reasons.map((r) => [r.rule?.description, r.rule?.line, r.groups, r.groupIds])]
      );
    };
    const at = `&at=${encodeURIComponent(yesterday.toISOString())}`;
    const [past, now] = [await wholeReport(at), await wholeReport("")];
    // The rule renamed and moved today: yesterday's name and line as of yesterday, today's now.
    expect(why(past, "cid@example.com", "company", null, "admin")).toEqual([
      "applied",
      [["Platform administrators", 5, ["Platform Admins"], [admins]]],
    ]);
    expect(why(now, "cid@example.com", "company", null, "admin")).toEqual([
      "current",
      [["Company administrators", 24, ["Platform Admins"], [admins]]],
    ]);
    // The group bob left today: his grants from Support, and Support among his reasons, as of yesterday only.
    expect(why(past, "bob@example.com", "workspace", "US Production", "basic_access")).toEqual([
      "applied",
      [["Support agents", 17, ["Support"], [support]]],
    ]);
    expect(why(past, "bob@example.com", "workspace", "EU Production", "basic_access")?.[1]).toEqual([
      ["EU marketers", 8, ["Marketing"], [expect.any(String)]],
      ["Support agents", 17, ["Support"], [support]],
    ]);
    expect(why(now, "bob@example.com", "workspace", "EU Production", "basic_access")?.[1]).toEqual([
      ["EU marketers", 8, ["Marketing"], [expect.any(String)]],
    ]);
    expect(new Set((await wholeReport(`&group=Support${at}`)).map((r) => r.userName))).toEqual(
      new Set(["ann@example.com", "bob@example.com"]),
    );
  });

  it("as of yesterday, an entry that recorded no reasons (written before they were) falls back to today's, marked so", async () => {
    const db = stack.service.db;
    const saved: { id: string; reasons: unknown }[] = await db.query(
      `SELECT id, reasons FROM reconcile_log WHERE user_name = 'cid@example.com' AND reasons IS NOT NULL`,
    );
    expect(saved.length).toBeGreaterThan(0);
    await db.query(`UPDATE reconcile_log SET reasons = NULL WHERE id = ANY($1::bigint[])`, [saved.map((r) => r.id)]);
    try {
      const at = encodeURIComponent(yesterday.toISOString());
      const rows = await wholeReport(`&at=${at}&user=cid@example.com`);
      const admin = rows.find((r) => r.permission === "admin")!;
      expect([admin.reasonsAsOf, admin.reasons.map((r) => [r.rule?.description, r.rule?.line])]).toEqual([
        "current",
        [["Company administrators", 24]],
      ]);
      const csv = await adminApi(stack)(`/access?format=csv&at=${at}&user=cid@example.com`);
      expect(
        csv.text
          .trim()
          .split("\r\n")
          .slice(1)
          .map((l) => cells(l).at(-2)), // reasonsAsOf, before the added `denied` column
      ).toEqual(["current", "current"]);
    } finally {
      for (const r of saved)
        await db.query(`UPDATE reconcile_log SET reasons = $2 WHERE id = $1`, [r.id, JSON.stringify(r.reasons)]);
    }
  });

  it("refuses a date that is not ISO 8601", async () => {
    expect((await adminApi(stack)("/access?at=30%20June")).status).toBe(400);
  });
});

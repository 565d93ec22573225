import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { UnrecognisedReportError } from "../../src/platformRecord/csv.js";
import type { Findings } from "../../src/platformRecord/events.js";
import { importPlatformEvents } from "../../src/platformRecord/importer.js";
import { csrfFrom, signInLocally, startAdminHarness, type AdminHarness } from "../support/adminHarness.js";
import { runCli } from "../support/cli.js";
import { ACS, ADMIN_TOKEN, SP_ENTITY } from "../support/constants.js";
import {
  authnRequestIdFromRedirect,
  encodeResponse,
  makeIdpKeys,
  samlLoginCookie,
  signedResponse,
} from "../support/saml.js";
import { startStack, type Stack } from "../support/stack.js";

/**
 * The platform's Security Event report imported (docs/platform-record.md) by the one use case and
 * its three surfaces: the CLI, POST /admin/api/platform/events and the /admin/platform page. Each
 * event is kept once; a file that is not the report imports nothing; rows that do not read are named.
 */

const HEADER = "Time (UTC),Actor,Event,Account,IP Address,Details\r\n";
const START = Date.parse("2026-12-05T00:00:00.000Z");

/** A report in the emulator's layout, newest first: `n` events from the `from`th on. */
function report(n: number, from = 0): string {
  const rows: string[] = [];
  for (let i = from + n - 1; i >= from; i--)
    rows.push(
      `${new Date(START + i * 1000).toISOString()},ops-admin@example.com,${i % 2 ? "Added Account" : "Updated Account Permission"},user${i}@example.com,10.0.0.1,"view_segments, export_user_data"\r\n`,
    );
  return HEADER + rows.join("");
}

const NOT_THE_REPORT = "Name,Email,Role\r\nKate,kate@example.com,admin\r\n";

describe("importing the Security Event report", () => {
  let stack: Stack;
  let dir: string;
  beforeAll(async () => {
    stack = await startStack({ workers: false });
    dir = await mkdtemp(path.join(tmpdir(), "platform-events-"));
  });
  afterAll(async () => stack?.close());

  const count = async (table: string) =>
    (await stack.database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;
  const deps = (analyse?: () => Promise<Findings>) => ({
    db: stack.database.db,
    clock: systemClock,
    ...(analyse ? { analyse } : {}),
  });

  it("imports 10,000 rows in well under 5 s, and the same report again imports 0 and counts them known", async () => {
    const text = report(10_000);
    const storedWhenAnalysed: number[] = [];
    const findings: Findings = {
      ownWrites: 0,
      candidates: 1,
      outsideChanges: 0,
      removedByHand: 0,
      activity: 0,
      catalogueEdits: 0,
      ignored: 0,
    };
    const analyse = async () => {
      storedWhenAnalysed.push(await count("platform_events"));
      return findings;
    };
    const began = performance.now();
    const first = await importPlatformEvents(deps(analyse), { text, source: "test", actor: "kate@example.com" });
    const seconds = (performance.now() - began) / 1000;
    expect(seconds).toBeLessThan(5);
    expect(first).toMatchObject({ rows: 10_000, imported: 10_000, duplicates: 0, skipped: [], findings });
    // The analysis ran after the events were stored, and saw them.
    expect(storedWhenAnalysed).toEqual([10_000]);

    const again = await importPlatformEvents(deps(), { text, source: "test", actor: "kate@example.com" });
    expect(again).toMatchObject({ rows: 10_000, imported: 0, duplicates: 10_000, findings: null });
    expect(again.importId).not.toBe(first.importId);
    // An overlapping report (the S3 export's day, say) adds only what is new.
    const overlap = await importPlatformEvents(deps(), { text: report(20, 9_990), source: "s3", actor: null });
    expect(overlap).toMatchObject({ rows: 20, imported: 10, duplicates: 10 });
    expect(await count("platform_events")).toBe(10_010);
    const [stored] = await stack.database.db.query(
      `SELECT actor, event, kind, account, ip, details FROM platform_events WHERE account = 'user1@example.com'`,
    );
    expect(stored).toEqual({
      actor: "ops-admin@example.com",
      event: "Added Account",
      kind: "account-added",
      account: "user1@example.com",
      ip: "10.0.0.1",
      details: "view_segments, export_user_data",
    });
  });

  it("refuses a file that is not the report, naming the headers found and looked for, and imports nothing", async () => {
    const [events, imports] = [await count("platform_events"), await count("platform_event_imports")];
    const attempt = importPlatformEvents(deps(), { text: NOT_THE_REPORT, source: "test", actor: "kate" });
    await expect(attempt).rejects.toBeInstanceOf(UnrecognisedReportError);
    await expect(attempt).rejects.toThrow(
      /Headers found: "Name", "Email", "Role"\. Looked for time: time, time \(utc\)/,
    );
    expect([await count("platform_events"), await count("platform_event_imports")]).toEqual([events, imports]);
  });

  it("skips the rows that do not read, each named by its line, and imports the rest", async () => {
    const text =
      HEADER +
      "2026-12-06T10:00:00.000Z,ops-admin@example.com,Removed Account,gone@example.com,,\r\n" +
      "yesterday,ops-admin@example.com,Added Account,x@example.com,,\r\n" +
      "2026-12-06T09:00:00.000Z,ops-admin@example.com,,y@example.com,,\r\n" +
      "2026-12-06 08:00,ops-admin@example.com,Added Account\r\n" +
      "2026-12-06 07:00 UTC,ops-admin@example.com,Developer Suspended,sus@example.com,,\r\n";
    const result = await importPlatformEvents(deps(), { text, source: "test", actor: "kate" });
    expect(result).toMatchObject({ rows: 5, imported: 2, duplicates: 0 });
    expect(result.skipped).toEqual([
      { line: 3, reason: 'the time "yesterday" is not a time' },
      { line: 4, reason: "no event" },
      { line: 5, reason: "has 3 field(s); the header has 6" },
    ]);
    const [stored] = await stack.database.db.query<{ skipped: unknown }>(
      `SELECT skipped FROM platform_event_imports WHERE id = $1`,
      [result.importId],
    );
    expect(stored!.skipped).toEqual(result.skipped);
  });

  it("CLI: `platform events import FILE` prints the counts and each skipped line; a refused file exits 1", async () => {
    const good = path.join(dir, "security-events.csv");
    await writeFile(good, `\uFEFF${report(3, 20_000)}2026-12-06T10:00:00Z,a@example.com,Added Account,only-three\r\n`);
    const first = await runCli(stack, ["platform", "events", "import", good, "--as", "kate@example.com"]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/4 row\(s\) read, 3 event\(s\) imported, 0 already known, 1 line\(s\) skipped\./);
    expect(first.stdout).toContain("line 5: has 4 field(s); the header has 6");
    const again = await runCli(stack, ["platform", "events", "import", good]);
    expect(again.stdout).toMatch(/0 event\(s\) imported, 3 already known/);

    const bad = path.join(dir, "users.csv");
    await writeFile(bad, NOT_THE_REPORT);
    const events = await count("platform_events");
    const refused = await runCli(stack, ["platform", "events", "import", bad]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Headers found: "Name", "Email", "Role"/);
    expect(refused.stderr).toMatch(/Looked for time: time, time \(utc\)/);
    expect(await count("platform_events")).toBe(events);
  });

  it("API: POST /admin/api/platform/events takes a text/csv body (200, then 0 imported); 400 names the headers; no token 401", async () => {
    const post = (body: string, token: string | null = ADMIN_TOKEN) => {
      const req = request(stack.service.url).post("/admin/api/platform/events").set("Content-Type", "text/csv");
      return (token ? req.set("Authorization", `Bearer ${token}`) : req).send(body);
    };
    const text = report(5, 30_000);
    const first = await post(text);
    expect(first.status).toBe(200);
    // The service runs its analysis after the import: five accounts no one provisioned are candidates.
    expect(first.body).toMatchObject({ rows: 5, imported: 5, duplicates: 0, skipped: [], findings: { candidates: 5 } });
    expect(typeof first.body.importId).toBe("number");
    expect((await post(text)).body).toMatchObject({ imported: 0, duplicates: 5 });

    const events = await count("platform_events");
    const refused = await post(NOT_THE_REPORT);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/Headers found: "Name", "Email", "Role"\. Looked for time:/);
    expect((await post(report(1, 40_000), null)).status).toBe(401);
    expect((await post(report(1, 40_000), "not-the-admin-token-0123456789abcdef")).status).toBe(401);
    const json = await request(stack.service.url)
      .post("/admin/api/platform/events")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      .send({ csv: "x" });
    expect(json.status).toBe(400);
    expect(await count("platform_events")).toBe(events);
  });

  it("page: an admin uploads the report and sees the import and the recent imports; a refused upload imports nothing", async () => {
    const agent = request.agent(stack.service.url);
    expect((await signInLocally(agent)).status).toBe(303);
    const page = await agent.get("/admin/platform");
    expect(page.status).toBe(200);
    expect(page.text).toContain('href="/admin/platform"'); // in the navigation
    const upload = (text: string, name: string) =>
      agent
        .post("/admin/platform/events")
        .field("_csrf", csrfFrom(page.text))
        .attach("report", Buffer.from(text), { filename: name, contentType: "text/csv" });
    const done = await upload(`${report(2, 50_000)}bad time,a,Added Account,b,,\r\n`, "security-events.csv");
    expect(done.status).toBe(200);
    expect(done.text).toMatch(/Events imported<\/dt><dd>2</);
    expect(done.text).toContain("line 4: the time &quot;bad time&quot; is not a time");
    expect(done.text).toContain("upload:security-events.csv");
    const events = await count("platform_events");
    const refused = await upload(NOT_THE_REPORT, "users.csv");
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("Headers found: &quot;Name&quot;, &quot;Email&quot;, &quot;Role&quot;");
    expect(await count("platform_events")).toBe(events);
    // Without the form's CSRF token, nothing is imported.
    const forged = await agent
      .post("/admin/platform/events")
      .attach("report", Buffer.from(report(1, 60_000)), { filename: "x.csv", contentType: "text/csv" });
    expect(forged.status).toBe(403);
    expect(await count("platform_events")).toBe(events);
  });
});

describe("the platform page's upload is an admin's", () => {
  let h: AdminHarness;
  const idp = makeIdpKeys("test-idp");
  beforeAll(async () => {
    h = await startAdminHarness({
      SAML_ENTRY_POINT: "https://idp.example.test/sso",
      SAML_ISSUER: SP_ENTITY,
      SAML_IDP_CERT: idp.cert,
      SAML_CALLBACK_URL: ACS,
      SAML_ROLE_ATTRIBUTE: "groups",
      SAML_ADMIN_VALUES: "scim-admins",
      SAML_VIEWER_VALUES: "scim-viewers",
      SAML_IDP_ISSUER: "https://idp.example.test",
    });
  });
  afterAll(async () => h?.database.drop());

  async function signIn(role: string): Promise<request.Agent> {
    const agent = request.agent(h.app);
    const login = await agent.get("/admin/saml/login");
    const id = authnRequestIdFromRedirect(login.headers.location!);
    const xml = signedResponse(
      {
        inResponseTo: id,
        acsUrl: ACS,
        audience: SP_ENTITY,
        nameId: `${role}@example.com`,
        role,
        roleAttribute: "groups",
      },
      idp,
    );
    const res = await agent
      .post("/admin/saml/acs")
      .set({ Cookie: samlLoginCookie(login) })
      .type("form")
      .send({ SAMLResponse: encodeResponse(xml) });
    expect(res.status).toBe(303);
    return agent;
  }

  it("a viewer reads the page, without the form, and is refused the upload (403); an admin's is imported", async () => {
    const viewer = await signIn("scim-viewers");
    const page = await viewer.get("/admin/platform");
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('action="/admin/platform/events"');
    const refused = await viewer
      .post("/admin/platform/events")
      .field("_csrf", csrfFrom(page.text))
      .attach("report", Buffer.from(report(1)), { filename: "r.csv", contentType: "text/csv" });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("Your role (viewer) cannot import the platform's Security Event report");
    const events = async () =>
      (await h.database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM platform_events`))[0]!.n;
    expect(await events()).toBe(0);

    const admin = await signIn("scim-admins");
    const adminPage = await admin.get("/admin/platform");
    expect(adminPage.text).toContain('action="/admin/platform/events"');
    const done = await admin
      .post("/admin/platform/events")
      .field("_csrf", csrfFrom(adminPage.text))
      .attach("report", Buffer.from(report(1)), { filename: "r.csv", contentType: "text/csv" });
    expect(done.status).toBe(200);
    expect(await events()).toBe(1);
  });
});

import { parse } from "csv-parse/sync";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, emulatorStats, idp, startStack, waitForQueueIdle, type Stack } from "../support/stack.js";
import { ADMIN_TOKEN, signInLocally } from "../support/adminHarness.js";
import { recordActivity, recordCatalogueEdit } from "../../src/platformRecord/managedChanges.js";
import type { PlatformEventKind } from "../../src/platformRecord/events.js";
import type { StoredPlatformEvent } from "../../src/db/platform/recordRepository.js";

/**
 * Sign-in and suspension facts, and edits of roles, permission sets and teams, as the platform's
 * record reports them (issue 44, section 3): stored at no platform call, shown on the user page,
 * in the access review (page, CSV, API) and on the mapping page.
 */

let stack: Stack;
let agent: request.Agent;
let annId: string;
let nextId = 100;

const at = (iso: string) => new Date(iso);
function eventOf(kind: PlatformEventKind, name: string, when: Date, extra: Partial<StoredPlatformEvent> = {}) {
  return {
    id: String(nextId++),
    at: when,
    actor: "ops-admin@example.com",
    event: name,
    kind,
    account: "ann@example.com",
    ip: null,
    details: null,
    ...extra,
  } satisfies StoredPlatformEvent;
}

beforeAll(async () => {
  stack = await startStack();
  const scim = idp(stack);
  annId = await scim.createUser("ann@example.com");
  const bob = await scim.createUser("bob@example.com");
  await scim.createGroup("Marketing", [annId, bob]);
  await waitForQueueIdle(stack);
  agent = request.agent(stack.service.url);
  await signInLocally(agent);
});
afterAll(async () => stack?.close());

describe("the platform's record of managed accounts: activity and catalogue edits", () => {
  it("keeps each account's latest sign-in and suspension, whatever order the events come in, at no platform call", async () => {
    const deps = { db: stack.service.db };
    const spent = (await emulatorStats(stack)).scimDaily.used;
    // The daily export first, then an older manual report overlapping it.
    expect(await recordActivity(deps, eventOf("signed-in", "Signed In", at("2026-12-05T09:30:00Z")))).toBe("recorded");
    expect(await recordActivity(deps, eventOf("suspended", "Developer Suspended", at("2026-12-05T11:00:00Z")))).toBe(
      "recorded",
    );
    await recordActivity(deps, eventOf("signed-in", "Signed In", at("2026-12-01T08:00:00Z")));
    await recordActivity(deps, eventOf("unsuspended", "Developer Unsuspended", at("2026-12-04T08:00:00Z")));
    await recordActivity(deps, eventOf("failed-login", "Failed Login", at("2026-12-05T09:29:00Z")));
    expect(await recordActivity(deps, eventOf("signed-in", "Signed In", new Date(), { account: null }))).toBe(
      "ignored",
    );
    expect((await emulatorStats(stack)).scimDaily.used).toBe(spent);

    const page = await agent.get(`/admin/users/${annId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("The platform's record");
    expect(page.text).toContain("suspended by ops-admin@example.com at 2026-12-05T11:00:00.000Z");

    const api = await adminApi(stack)("/access?user=ann@example.com");
    expect(api.status).toBe(200);
    for (const row of api.body.rows)
      expect(row).toMatchObject({
        lastSignInAt: "2026-12-05T09:30:00.000Z",
        suspended: "suspended by ops-admin@example.com at 2026-12-05T11:00:00.000Z",
        outside: null,
      });
    const csv = await adminApi(stack)("/access?user=ann@example.com&format=csv");
    const [first] = parse(csv.text, { columns: true }) as Record<string, string>[];
    expect(first).toMatchObject({
      lastSignInAt: "2026-12-05T09:30:00.000Z",
      suspended: "suspended by ops-admin@example.com at 2026-12-05T11:00:00.000Z",
      grantedOutside: "",
    });
    const review = await agent.get("/admin/access");
    expect(review.text).toContain("Last sign-in");
    expect(review.text).toContain("suspended by ops-admin@example.com");
  });

  it("names on the mapping page the roles, permission sets and teams the mapping uses that were edited in the dashboard", async () => {
    const deps = { db: stack.service.db };
    const edited = eventOf("team-changed", "Edited Team", at("2026-12-05T10:02:00Z"), {
      account: null,
      details: "Lifecycle",
    });
    expect(await recordCatalogueEdit(deps, edited)).toBe("recorded");
    expect(await recordCatalogueEdit(deps, edited)).toBe("recorded"); // the same event again: stored once
    await recordCatalogueEdit(
      deps,
      eventOf("role-changed", "Updated Custom Role", at("2026-12-05T10:05:00Z"), { account: null, details: "Unused" }),
    );
    const [{ n }] = await stack.service.db.query(`SELECT count(*)::int AS n FROM platform_catalogue_edits`);
    expect(n).toBe(2);

    const page = await agent.get("/admin/mapping");
    expect(page.status).toBe(200);
    expect(page.text).toContain(
      "team &quot;Lifecycle&quot; (line 9): Edited Team in the platform's dashboard by ops-admin@example.com at 2026-12-05T10:02:00.000Z",
    );
    expect(page.text).not.toContain("Unused");
  });

  it("a campaign scoped to the accounts not signed in for N days takes only theirs", async () => {
    const deps = { db: stack.service.db };
    const day = 86_400_000;
    await recordActivity(deps, eventOf("signed-in", "Signed In", new Date(Date.now() - day)));
    await recordActivity(
      deps,
      eventOf("signed-in", "Signed In", new Date(Date.now() - 400 * day), { account: "bob@example.com" }),
    );
    const started = await request(stack.service.url)
      .post("/admin/api/campaigns")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      .send({
        name: "Dormant accounts",
        scope: { kind: "not-signed-in", days: 90 },
        dueAt: new Date(Date.now() + 7 * day).toISOString(),
        fallbackReviewer: "security@example.com",
      });
    expect(started.status).toBe(201);
    const items = await adminApi(stack)(`/campaigns/${started.body.id as string}/items?as=security@example.com`);
    expect(new Set(items.body.items.map((i: { userName: string }) => i.userName))).toEqual(
      new Set(["bob@example.com"]),
    );
    const refused = await request(stack.service.url)
      .post("/admin/api/campaigns")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      .send({
        name: "Bad",
        scope: { kind: "not-signed-in", days: 0 },
        dueAt: new Date(Date.now() + 7 * day).toISOString(),
        fallbackReviewer: "security@example.com",
      });
    expect(refused.status).toBe(400);
  });
});

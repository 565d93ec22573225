import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, adminApi, idp, waitForQueueIdle, type Stack } from "../support/stack.js";
import { requestTimes } from "../support/emulator.js";
import { CATALOGUE_MAPPING } from "../support/mapping.js";
import { platformSide, startCatalogueStack } from "./catalogueStack.js";
import { eventually } from "../support/wait.js";
import { csrfFrom, signInLocally } from "../support/adminHarness.js";

/**
 * Platform access assigned in the IdP as entitlements (issue 36), end to end on the emulator:
 * discovery costs no platform call; an assignment reaches the platform in one call; the access
 * review names it "assigned entitlement … in Okta"; a campaign revoke opens a deny, says the IdP
 * still assigns it, and the grant leaves the platform; a removal in the IdP is one reduction call,
 * funded from the reserve. Figures are printed from the emulator's own counters and request times.
 */

describe("access assigned in the IdP, from assignment to revoke", () => {
  let stack: Stack;
  let alice: string;
  const { used, held, debits } = platformSide(() => stack, "alice@example.com");
  const post = (path: string, body: object) =>
    request(stack.service.url).post(`/admin/api${path}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`).send(body);

  beforeAll(async () => {
    stack = await startCatalogueStack();
    alice = await idp(stack).createUser("alice@example.com");
    await idp(stack).createGroup("Marketing", [alice]);
    await waitForQueueIdle(stack);
  });
  afterAll(async () => stack?.close());

  it("serves discovery without a platform call", async () => {
    const before = await used();
    for (const path of ["/ResourceTypes", "/Schemas", "/Roles", "/Entitlements?count=2", "/Entitlements/eu-analyst"])
      expect((await idp(stack).send("get", path)).status).toBe(200);
    expect(await used()).toBe(before);
  });

  it("assign → platform (1 call) → access review → campaign revoke → deny; removal in the IdP is 1 reduction from the reserve", async () => {
    // Assignment: the IdP adds an entitlement.
    const beforeAssign = await used();
    await idp(stack).patch(`/Users/${alice}`, [
      { op: "add", path: "entitlements", value: [{ value: "marketer-fashion", type: "permissionSet" }] },
    ]);
    await waitForQueueIdle(stack);
    const perAssignment = (await used()) - beforeAssign;
    expect(await held()).toContain("Marketer");
    expect(perAssignment).toBe(1);

    // The access review names the source.
    const access = await adminApi(stack)(`/access?user=alice@example.com`);
    expect(access.status, access.text).toBe(200);
    const row = (access.body.rows as { scope: string; reasons: { groups: string[]; assigned?: unknown }[] }[]).find(
      (r) => r.scope === "permissionSet",
    )!;
    expect(row.reasons).toEqual([
      expect.objectContaining({ groups: [], assigned: expect.objectContaining({ id: "marketer-fashion" }) }),
    ]);
    const csv = await adminApi(stack)(`/access?user=alice@example.com&format=csv`);
    expect(csv.text).toContain("assigned entitlement Marketer – Fashion Brands in Okta (catalogue 'marketer-fashion'");
    // The log entry that applied it, and the user's page, say where it came from.
    const agent = request.agent(stack.service.url);
    await signInLocally(agent);
    const [applied] = (await adminApi(stack)(`/log?user=alice@example.com&limit=1`)).body.entries as { id: string }[];
    const entryPage = await agent.get(`/admin/log/${applied!.id}`);
    expect(entryPage.status).toBe(200);
    expect(entryPage.text).toContain("Why, as recorded then");
    expect(entryPage.text).toMatch(
      /Marketer[^<]*— assigned entitlement Marketer – Fashion Brands in Okta \(catalogue 'marketer-fashion'/,
    );
    const userPage = await agent.get(`/admin/users/${alice}`);
    expect(userPage.text).toContain(
      "assigned entitlement Marketer – Fashion Brands in Okta (catalogue 'marketer-fashion')",
    );

    // A campaign revokes it: a deny, a note that the IdP still assigns it, and the grant leaves the platform.
    const started = await post("/campaigns", {
      name: "Assigned access",
      scope: { kind: "everything" },
      dueAt: new Date(Date.now() + 86_400_000).toISOString(),
      fallbackReviewer: "security@example.com",
    });
    expect(started.status, started.text).toBe(201);
    const items = (await adminApi(stack)(`/campaigns/${started.body.id}/items?as=security@example.com`)).body.items as {
      id: string;
      scope: string;
      permission: string;
      idpAssigns: string | null;
    }[];
    const set = items.find((i) => i.scope === "permissionSet")!;
    expect(set.permission).toBe("Marketer");
    expect(set.idpAssigns).toMatch(/assigned entitlement Marketer – Fashion Brands in Okta: .*Okta still assigns it/);
    const revoked = await post(`/campaigns/${started.body.id}/decisions`, {
      as: "security@example.com",
      decision: "revoke",
      comment: "not in the fashion team",
      items: [set.id],
    });
    expect(revoked.status, revoked.text).toBe(200);
    await eventually("the revoke on the platform", async () => !(await held()).includes("Marketer"));
    const denies = (await adminApi(stack)(`/denies?user=${alice}&active=true`)).body.denies as unknown[];
    expect(denies).toHaveLength(1);
    await waitForQueueIdle(stack);
    expect(await held()).not.toContain("Marketer"); // the IdP still assigns it; the deny holds

    // A second entitlement, then its removal in the IdP: a reduction, paid from the reserve.
    await idp(stack).patch(`/Users/${alice}`, [
      { op: "add", path: "entitlements", value: [{ value: "eu-analyst", type: "workspacePermissions" }] },
    ]);
    await waitForQueueIdle(stack);
    expect(await held()).toContain("view_segments");
    // A catalogue change is previewed with its budget cost like any mapping change: one user assigned it, one call.
    const mappingPage = await agent.get("/admin/mapping");
    const preview = await agent
      .post("/admin/mapping/preview")
      .type("form")
      .send({
        _csrf: csrfFrom(mappingPage.text),
        draft: CATALOGUE_MAPPING.replace(
          "type: workspacePermissions\n      workspace: EU Production\n      permissions: [view_campaigns, view_segments]",
          "type: workspacePermissions\n      workspace: EU Production\n      permissions: [view_campaigns, view_segments, edit_campaigns]",
        ),
      });
    expect(preview.status).toBe(200);
    expect(preview.text).toMatch(
      /<span class="stat">1<\/span> users affected · about <strong>1<\/strong> platform calls/,
    );
    expect(preview.text).toContain("alice@example.com");
    expect(preview.text).toContain("edit_campaigns");
    const beforeRemoval = await used();
    const debitsBefore = (await debits()).length;
    const sentAt = new Date();
    await idp(stack).patch(`/Users/${alice}`, [{ op: "remove", path: 'entitlements[value eq "eu-analyst"]' }]);
    await waitForQueueIdle(stack);
    const perRemoval = (await used()) - beforeRemoval;
    const [arrived] = await requestTimes(stack.emulator.url, sentAt, "Users");
    expect(await held()).not.toContain("view_segments");
    expect(await held()).toContain("view_campaigns"); // the group rule's grant stays
    expect(perRemoval).toBe(1);
    expect((await debits()).slice(debitsBefore)).toEqual([{ action: "update", uses_reserve: true }]);
    const latencyMs = arrived! - sentAt.getTime();
    // Not a timing target (that is the figure printed below): a reduction never waits, so it lands
    // well inside the settle window a grant would have waited.
    expect(latencyMs).toBeLessThan(5_000);
    console.log(
      `[issue 36 figures] calls per assignment: ${perAssignment}; calls per removal: ${perRemoval}; ` +
        `revocation latency of an IdP-side removal (PATCH sent → platform PUT arrived): ${latencyMs} ms`,
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idp, waitForQueueIdle, type Stack } from "../support/stack.js";
import { CATALOGUE_MAPPING } from "../support/mapping.js";
import { platformSide, startCatalogueStack } from "./catalogueStack.js";

/**
 * Entra ID removing one of a user's two app roles (issue 36), end to end on the emulator: the
 * platform keeps the other role's grants, loses only the removed one's, in one PUT paid from the
 * reserve, and the log names the role. Entra's shapes are Microsoft's own examples ("Customizing
 * user provisioning attribute-mappings", "Provisioning a role to a SCIM app"):
 *
 * - POST: every role `primary: false`, `type: WindowsAzureActiveDirectoryRole`.
 * - AssertiveAppRoleAssignmentsComplex (Microsoft's recommended mapping for several roles): a
 *   removal is a PATCH `replace` of `roles` with the roles the user still holds.
 * - AppRoleAssignmentsComplex: PATCH `Add` with each role's assignment as JSON inside a string.
 *   Microsoft says this mapping "does PATCH add only", so it never sends a removal at all.
 *
 * Not published by Microsoft: a `Remove` on `roles`. The shape tried last is Entra's documented
 * member removal without the aadOptscim062020 flag (`Remove`, path, a value list) carrying the
 * roles' JSON-in-string value; it is here so that, should Entra send it, it works too.
 */

const ROLE = "WindowsAzureActiveDirectoryRole";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
/** Entra's form of an assignment inside a PATCH value (the id is the app role assignment's). */
const inString = (id: string, value: string, displayName: string) => ({
  value: JSON.stringify({ id, value, displayName }),
});

describe("Entra removes one of two app roles", () => {
  let stack: Stack;
  let user: string;
  const { used, held, debits } = platformSide(() => stack, "rosa@example.com");
  /** The platform requests that arrived from `since` on, by route key. */
  const routesSince = async (since: Date) => {
    const res = await fetch(
      `${stack.emulator.url}/_emulator/requests?since=${encodeURIComponent(since.toISOString())}`,
    );
    return ((await res.json()) as { requests: { route: string }[] }).requests.map((r) => r.route);
  };
  /** Sends Entra's PATCH and returns what it cost on the platform: calls, their routes, the ledger's new debits. */
  const entraPatch = async (Operations: unknown[]) => {
    const before = { used: await used(), debits: (await debits()).length, at: new Date() };
    const res = await idp(stack).send("patch", `/Users/${user}`, { schemas: [PATCH_OP], Operations });
    expect(res.status, res.text).toBeLessThan(300);
    await waitForQueueIdle(stack);
    return {
      calls: (await used()) - before.used,
      routes: await routesSince(before.at),
      debits: (await debits()).slice(before.debits),
    };
  };
  const marketer = { primary: false, type: ROLE, display: "Marketer – Fashion Brands", value: "marketer-fashion" };
  const analyst = { primary: false, type: ROLE, display: "EU analyst", value: "eu-analyst" };

  beforeAll(async () => {
    stack = await startCatalogueStack(CATALOGUE_MAPPING.replace("assignedIn: Okta", "assignedIn: Entra ID"));
    // Entra's POST with both roles (AssignmentsComplex: primary false on each, the type on a POST).
    const created = await idp(stack).send("post", "/Users", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      externalId: "rosa",
      userName: "rosa@example.com",
      active: true,
      displayName: "Rosa Example",
      name: { givenName: "Rosa", familyName: "Example" },
      roles: [marketer, analyst],
    });
    expect(created.status, created.text).toBe(201);
    user = created.body.id as string;
    await waitForQueueIdle(stack);
    expect(await held()).toContain("Marketer");
    expect(await held()).toContain("view_segments");
  });
  afterAll(async () => stack?.close());

  it("AssertiveAppRoleAssignmentsComplex's replace with the remaining role: the other role's grants stay, one PUT from the reserve", async () => {
    const cost = await entraPatch([{ op: "replace", path: "roles", value: [analyst] }]);
    expect(await held()).not.toContain("Marketer");
    expect(await held()).toContain("view_segments");
    expect(cost).toEqual({
      calls: 1,
      routes: ["PUT /scim/v2/Users/{id}"],
      debits: [{ action: "update", uses_reserve: true }],
    });
    const [entry] = (await stack.service.db.query(
      `SELECT trigger FROM reconcile_log WHERE user_name = 'rosa@example.com' ORDER BY id DESC LIMIT 1`,
    )) as { trigger: { change: unknown } }[];
    expect(entry!.trigger.change).toMatchObject({
      what: "assignments-changed",
      assigned: [],
      removed: [{ attribute: "roles", value: "marketer-fashion", name: "Marketer – Fashion Brands" }],
      assignedIn: "Entra ID",
    });
  });

  it("AppRoleAssignmentsComplex's Add (JSON inside a string) gives the role back in one call; the unpublished Remove with a value list takes it away in one", async () => {
    const added = await entraPatch([
      {
        op: "Add",
        path: "roles",
        value: [inString("06b07648-ecfe-589f-9d2f-6325724a46ee", "marketer-fashion", "Marketer – Fashion Brands")],
      },
    ]);
    expect(await held()).toContain("Marketer");
    expect(added.calls).toBe(1);
    expect(added.routes).toEqual(["PUT /scim/v2/Users/{id}"]);

    const removed = await entraPatch([
      {
        op: "Remove",
        path: "roles",
        value: [inString("06b07648-ecfe-589f-9d2f-6325724a46ee", "marketer-fashion", "Marketer – Fashion Brands")],
      },
    ]);
    expect(await held()).not.toContain("Marketer");
    expect(await held()).toContain("view_segments");
    expect(removed).toEqual({
      calls: 1,
      routes: ["PUT /scim/v2/Users/{id}"],
      debits: [{ action: "update", uses_reserve: true }],
    });
    const roles = (await idp(stack).send("get", `/Users/${user}`)).body.roles as { value: string }[];
    expect(roles.map((r) => r.value)).toEqual(["eu-analyst"]);
  });
});

import request from "supertest";
import { expect } from "vitest";
import { emulatorState, idp, waitForQueueIdle, type Stack } from "./stack.js";

/**
 * Drift for a verifying resync to find: two users provisioned through the connector, then one
 * account edited and the other deleted on the platform behind the connector's back.
 */

// A person at the platform's own SCIM API, not the connector.
export const BY_HAND = {
  Authorization: "Bearer dev-scim-token",
  "X-Request-Origin": "someone-by-hand",
  "Content-Type": "application/json",
};

/** ann and bob in Marketing, provisioned and reconciled. */
export async function seedTwoMarketers(stack: Stack): Promise<{ ann: string; bob: string }> {
  const scim = idp(stack);
  const ann = await scim.createUser("ann@example.com");
  const bob = await scim.createUser("bob@example.com");
  await scim.createGroup("Marketing", [ann, bob]);
  await waitForQueueIdle(stack);
  return { ann, bob };
}

/** Someone edits ann's account in the platform's UI (company admin) and deletes bob's. */
export async function tamperBehindConnector(stack: Stack): Promise<void> {
  const { dashboardUsers } = await emulatorState(stack);
  const ann = dashboardUsers.find((u) => u.userName === "ann@example.com")!;
  const bob = dashboardUsers.find((u) => u.userName === "bob@example.com")!;
  const edited = {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    userName: ann.userName,
    name: { givenName: "ann", familyName: "Test" },
    department: "marketing",
    permissions: { companyPermissions: ["admin"], appGroup: [] },
  };
  expect((await request(stack.emulator.url).put(`/scim/v2/Users/${ann.id}`).set(BY_HAND).send(edited)).status).toBe(
    200,
  );
  expect((await request(stack.emulator.url).delete(`/scim/v2/Users/${bob.id}`).set(BY_HAND)).status).toBe(204);
}

import request from "supertest";
import type { Database } from "../../src/db/database.js";
import { emulatorState, emulatorStats, type Stack } from "../support/stack.js";

/** Shared helpers for the reconciler's behaviour tests (end state of the world, not call order). */

export const SCIM_USER = "urn:ietf:params:scim:schemas:core:2.0:User";

export async function scimUsed(stack: Stack): Promise<number> {
  return (await emulatorStats(stack)).scimDaily.used;
}

/** Requests the emulator received under `"<METHOD> <template>"`, faulted ones included. */
export async function requestsTo(stack: Stack, key: string): Promise<number> {
  return (await emulatorStats(stack)).requests[key] ?? 0;
}

export async function accountsNamed(stack: Stack, userName: string) {
  return (await emulatorState(stack)).dashboardUsers.filter((u) => u.userName.toLowerCase() === userName.toLowerCase());
}

/** Talks to the emulator's SCIM API directly, as someone working in the platform's own console would. */
export function platformScim(emulatorUrl: string) {
  const auth = (r: request.Test) =>
    r.set("Authorization", "Bearer dev-scim-token").set("X-Request-Origin", "test-console");
  return {
    create: (body: Record<string, unknown>) => auth(request(emulatorUrl).post("/scim/v2/Users")).send(body),
    delete: (id: string) => auth(request(emulatorUrl).delete(`/scim/v2/Users/${id}`)),
  };
}

/** The IdP user id of a userName (tests look users up the way an admin would). */
export async function idpUserId(db: Database, userName: string): Promise<string> {
  const rows: { id: string }[] = await db.query(`SELECT id FROM idp_users WHERE lower(user_name) = lower($1)`, [
    userName,
  ]);
  if (!rows[0]) throw new Error(`no IdP user ${userName}`);
  return rows[0].id;
}

export const MARKETING_WORKSPACE = {
  appGroupName: "EU Production",
  appGroupPermissions: ["basic_access", "send_campaigns_canvases"],
  team: [{ teamName: "Lifecycle", teamPermissions: ["basic_access"] }],
};

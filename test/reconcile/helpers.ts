import request from "supertest";
import type { Database } from "../../src/db/database.js";
import { emulatorState, emulatorStats, type Stack } from "../support/stack.js";

/** Shared helpers for the reconciler's behaviour tests (end state of the world, not call order). */

export const SCIM_USER = "urn:ietf:params:scim:schemas:core:2.0:User";

/** Waits until nothing but parked rows (and rows deferred past `untilDeferredBefore`) remain in the queue. */
export async function waitForQueueEmpty(db: Database, timeoutMs = 30_000, options: { ignoreDeferredAfter?: Date } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows: { n: number }[] = await db.query(
      `SELECT count(*)::int AS n FROM reconcile_queue WHERE parked_at IS NULL AND ($1::timestamptz IS NULL OR not_before < $1 OR priority IS NULL)`,
      [options.ignoreDeferredAfter ?? null],
    );
    if (rows[0]!.n === 0) return;
    if (Date.now() > deadline) throw new Error(`reconcile queue still has ${rows[0]!.n} rows`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls `check` until it returns true. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 30_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function scimUsed(stack: Stack): Promise<number> {
  return (await emulatorStats(stack)).scimDaily.used;
}

/** Requests the emulator received under `"<METHOD> <template>"`, faulted ones included. */
export async function requestsTo(stack: Stack, key: string): Promise<number> {
  return (await emulatorStats(stack)).requests[key] ?? 0;
}

export async function ledgerDebits(db: Database): Promise<number> {
  const rows: { n: number }[] = await db.query(`SELECT count(*)::int AS n FROM budget_debits`);
  return rows[0]!.n;
}

export async function accountsNamed(stack: Stack, userName: string) {
  return (await emulatorState(stack)).dashboardUsers.filter((u) => u.userName.toLowerCase() === userName.toLowerCase());
}

/** Talks to the emulator's SCIM API directly, as someone working in the platform's own console would. */
export function platformScim(emulatorUrl: string) {
  const auth = (r: request.Test) => r.set("Authorization", "Bearer dev-scim-token").set("X-Request-Origin", "test-console");
  return {
    create: (body: Record<string, unknown>) => auth(request(emulatorUrl).post("/scim/v2/Users")).send(body),
    delete: (id: string) => auth(request(emulatorUrl).delete(`/scim/v2/Users/${id}`)),
  };
}

export async function addFault(emulatorUrl: string, fault: Record<string, unknown>): Promise<void> {
  const res = await request(emulatorUrl).post("/_emulator/faults").send(fault);
  if (res.status !== 201) throw new Error(`fault ${res.status}: ${res.text}`);
}

export async function clearFaults(emulatorUrl: string): Promise<void> {
  await request(emulatorUrl).delete("/_emulator/faults");
}

/** The IdP user id of a userName (tests look users up the way an admin would). */
export async function idpUserId(db: Database, userName: string): Promise<string> {
  const rows: { id: string }[] = await db.query(`SELECT id FROM idp_users WHERE lower(user_name) = lower($1)`, [userName]);
  if (!rows[0]) throw new Error(`no IdP user ${userName}`);
  return rows[0].id;
}

export const MARKETING_WORKSPACE = {
  appGroupName: "EU Production",
  appGroupPermissions: ["basic_access", "send_campaigns_canvases"],
  team: [{ teamName: "Lifecycle", teamPermissions: ["basic_access"] }],
};

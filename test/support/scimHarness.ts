import request from "supertest";
import { loadEnv } from "../../src/config/env.js";
import { startService, type Service } from "../../src/service.js";
import { createTestDatabase, type TestDatabase } from "./db.js";
export { ENTERPRISE } from "./constants.js";

/** A service on a fresh database with a known IdP token, for the SCIM tests. */
export const SCIM_TOKEN = "test-scim-token-0123456789abcdef";
export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

export type ScimHarness = {
  service: Service;
  database: TestDatabase;
  get(path: string): request.Test;
  post(path: string, body: unknown): request.Test;
  put(path: string, body: unknown): request.Test;
  patch(path: string, body: unknown): request.Test;
  del(path: string): request.Test;
  close(): Promise<void>;
};

export async function startScimHarness(extraEnv: Record<string, string> = {}): Promise<ScimHarness> {
  const database = await createTestDatabase();
  const service = await startService({
    env: loadEnv({ PORT: "0", HOST: "127.0.0.1", SCIM_TOKEN, ...extraEnv }),
    databaseUrl: database.url,
  });
  const base = `${service.url}/scim/v2`;
  const auth = (t: request.Test) => t.set("Authorization", `Bearer ${SCIM_TOKEN}`);
  const json = (t: request.Test, body: unknown) =>
    auth(t).set("Content-Type", "application/scim+json").send(JSON.stringify(body));
  return {
    service,
    database,
    get: (path) => auth(request(base).get(path)),
    post: (path, body) => json(request(base).post(path), body),
    put: (path, body) => json(request(base).put(path), body),
    patch: (path, body) => json(request(base).patch(path), body),
    del: (path) => auth(request(base).delete(path)),
    async close() {
      await service.close();
      await database.drop();
    },
  };
}

let counter = 0;
/** A realistic user body with a unique userName. */
export function userBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter++;
  const userName = String(overrides.userName ?? `user${counter}.${Math.random().toString(36).slice(2, 8)}@example.com`);
  return {
    schemas: [USER_SCHEMA],
    userName,
    name: { givenName: "Given", familyName: `Family${counter}` },
    emails: [{ value: userName, type: "work", primary: true }],
    displayName: `Given Family${counter}`,
    active: true,
    ...overrides,
  };
}

/** The rows of reconcile_queue for these users, as user_id → trigger. */
type Mark = { kind: string; method?: string; resource?: string; change?: Record<string, unknown> };

export async function dirtyMarks(h: ScimHarness, userIds: string[]): Promise<Map<string, Mark>> {
  const rows: { user_id: string; trigger: Mark }[] = await h.service.db.query(
    `SELECT user_id, trigger FROM reconcile_queue WHERE user_id = ANY($1::uuid[])`,
    [userIds],
  );
  return new Map(rows.map((r) => [r.user_id, r.trigger]));
}

export async function clearDirtyMarks(h: ScimHarness): Promise<void> {
  await h.service.db.query(`DELETE FROM reconcile_queue`);
}

import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import type { Clock } from "../../src/clock.js";
import { loadEnv } from "../../src/config/env.js";
import { startEmulator, type EmulatorOptions, type RunningEmulator } from "../../src/emulator/index.js";
import { startService, type Service } from "../../src/service.js";
import { createTestDatabase, type TestDatabase } from "./db.js";
import { emulatorCounts, emulatorDump } from "./emulator.js";
import { TEST_MAPPING } from "./mapping.js";
import { ADMIN_TOKEN } from "./constants.js";
export { ADMIN_TOKEN } from "./constants.js";

/** A mapping file (the test mapping unless told) in a temporary folder of its own; returns its path. */
export async function writeMappingFile(mapping: string = TEST_MAPPING): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-mapping-"));
  const mappingFile = path.join(dir, "mapping.yaml");
  await writeFile(mappingFile, mapping);
  return mappingFile;
}

/**
 * The whole product in one process for end-to-end tests: a fresh database, the emulator as the
 * platform (over real HTTP), and the connector pointed at it.
 */

export const IDP_TOKEN = "test-idp-token-0123456789abcdefgh";

export { TEST_MAPPING } from "./mapping.js";

export type Stack = {
  database: TestDatabase;
  emulator: RunningEmulator;
  service: Service;
  mappingFile: string;
  close(): Promise<void>;
};

export async function startStack(
  options: {
    env?: Record<string, string>;
    mapping?: string;
    clock?: Clock;
    workers?: boolean;
    /** The URL the service reaches the test database by (a proxy in front of it); the test's own stays direct. */
    route?: (databaseUrl: string) => Promise<string>;
    /** The emulator's options (its permission model, …); the clock is `clock`. */
    emulator?: Omit<EmulatorOptions, "clock">;
  } = {},
): Promise<Stack> {
  const mappingFile = await writeMappingFile(options.mapping ?? TEST_MAPPING);
  const database = await createTestDatabase();
  const emulator = await startEmulator({ ...options.emulator, ...(options.clock ? { clock: options.clock } : {}) });
  const env = loadEnv({
    PORT: "0",
    HOST: "127.0.0.1",
    SCIM_TOKEN: IDP_TOKEN,
    ADMIN_TOKEN,
    MAPPING_FILE: mappingFile,
    RECONCILE_POLL_MS: "100",
    // Grants apply at once unless a test is about the settle window (test/reconcile/settle.test.ts).
    RECONCILE_SETTLE_MS: "0",
    // Accounts are deleted at once unless a test is about the grace (test/reconcile/reductions.test.ts).
    RECONCILE_DEPROVISION_GRACE_MS: "0",
    ...options.env,
  });
  const service = await startService({
    env,
    databaseUrl: options.route ? await options.route(database.url) : database.url,
    platform: {
      url: emulator.url,
      scimToken: "dev-scim-token",
      apiKey: "dev-api-key",
      requestOrigin: "scim-connector-test",
    },
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
  });
  return {
    database,
    emulator,
    service,
    mappingFile,
    async close() {
      await service.close();
      await emulator.close();
      await database.drop();
    },
  };
}

/** A SCIM client acting as the IdP. */
export function idp(stack: Stack) {
  const send = (method: "get" | "post" | "put" | "patch" | "delete", path: string, body?: unknown) => {
    const req = request(stack.service.url)[method](`/scim/v2${path}`).set("Authorization", `Bearer ${IDP_TOKEN}`);
    return body === undefined ? req : req.set("Content-Type", "application/scim+json").send(JSON.stringify(body));
  };
  return {
    send,
    async createUser(userName: string, extra: Record<string, unknown> = {}): Promise<string> {
      const res = await send("post", "/Users", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName,
        name: { givenName: userName.split("@")[0], familyName: "Test" },
        emails: [{ value: userName, type: "work", primary: true }],
        active: true,
        ...extra,
      });
      if (res.status !== 201) throw new Error(`create user ${res.status}: ${res.text}`);
      return res.body.id as string;
    },
    async createGroup(displayName: string, memberIds: string[] = [], externalId?: string): Promise<string> {
      const res = await send("post", "/Groups", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        displayName,
        ...(externalId ? { externalId } : {}),
        members: memberIds.map((value) => ({ value })),
      });
      if (res.status !== 201) throw new Error(`create group ${res.status}: ${res.text}`);
      return res.body.id as string;
    },
    async patch(path: string, operations: unknown[]) {
      const res = await send("patch", path, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: operations,
      });
      if (res.status >= 300) throw new Error(`patch ${path} ${res.status}: ${res.text}`);
      return res;
    },
  };
}

export { waitForQueueIdle } from "./queue.js";

export const emulatorState = (stack: Stack) => emulatorDump(stack.emulator.url);

export const emulatorStats = (stack: Stack) => emulatorCounts(stack.emulator.url);

export function adminApi(stack: Stack) {
  return (path: string) =>
    request(stack.service.url).get(`/admin/api${path}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`);
}

/** The emulator's Security Event report (its dashboard's download), posted to the connector's JSON API. */
export async function importEmulatorReport(stack: Stack) {
  const report = (await request(stack.emulator.url).get("/_emulator/security-events.csv")).text;
  return request(stack.service.url)
    .post("/admin/api/platform/events")
    .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
    .set("Content-Type", "text/csv")
    .send(report);
}

import express, { type Express } from "express";
import type request from "supertest";
import { systemClock } from "../../src/clock.js";
import { loadEnv, type Env } from "../../src/config/env.js";
import { AdminSessionRepository } from "../../src/db/auth/adminSessionRepository.js";
import { adminRouter, type AdminActions, type AdminActor, type AdminDataSources } from "../../src/http/admin/index.js";
import { requestContext } from "../../src/http/requestContext.js";
import { httpMechanisms } from "../../src/service/http.js";
import { createPlatformRecord } from "../../src/platformRecord/frontDoor.js";
import { platformImportOptions } from "../../src/platformRecord/importer.js";
import { createEvidence } from "../../src/review/evidence/frontDoor.js";
import { createCampaigns } from "../../src/review/campaigns/frontDoor.js";
import { sampleSources } from "./sampleData.js";
import { createTestDatabase, type TestDatabase } from "./db.js";
import { ADMIN_TOKEN } from "./constants.js";
export { ADMIN_TOKEN } from "./constants.js";

/** The admin router alone on an express app (as app.ts mounts it), over a fresh test database. */
export type AdminHarness = {
  app: Express;
  env: Env;
  database: TestDatabase;
  calls: { action: string; args: unknown[]; actor: AdminActor }[];
};

/** Pages read the canned sample data (test/support/sampleData.ts) unless a test gives its own `sources`. */
export async function startAdminHarness(
  envOverrides: Record<string, string> = {},
  sources: Partial<AdminDataSources> = {},
): Promise<AdminHarness> {
  const database = await createTestDatabase();
  const env = loadEnv({ HOST: "127.0.0.1", PORT: "0", ADMIN_TOKEN, ...envOverrides });
  const calls: AdminHarness["calls"] = [];
  // Recording actions: they stand in for the reconciler so the tests can see what ran, and as whom.
  const record =
    (action: string) =>
    async (...args: unknown[]) => {
      calls.push({ action, args: args.slice(0, -1), actor: args.at(-1) as AdminActor });
      return `${action} done`;
    };
  const actions: AdminActions = {
    approve: record("approve"),
    reject: record("reject"),
    reconcileNow: record("reconcileNow"),
    startResync: record("startResync"),
    resumeFamily: record("resumeFamily"),
    sendTestNotification: record("sendTestNotification"),
  };
  // The throttle and the allowance as the service builds them (src/service/http.ts).
  const { throttles, samlLoginAllowance } = httpMechanisms({ db: database.db, env, clock: systemClock });
  const app = express();
  app.set("trust proxy", "loopback");
  app.use(requestContext());
  app.use(
    "/admin",
    adminRouter({
      env,
      clock: systemClock,
      sessions: new AdminSessionRepository(database.db),
      sources: { ...sampleSources(), ...sources },
      actions,
      loginThrottle: throttles.adminLogin,
      samlLoginAllowance,
      campaigns: createCampaigns({
        db: database.db,
        clock: systemClock,
        undecidedAtClose: env.CAMPAIGN_UNDECIDED_AT_CLOSE,
      }),
      evidence: createEvidence({
        db: database.db,
        clock: systemClock,
        mappingFile: env.MAPPING_FILE,
        ...(env.EVIDENCE_SIGNING_KEY ? { signingKey: env.EVIDENCE_SIGNING_KEY } : {}),
      }),
      platformRecord: createPlatformRecord({ ...platformImportOptions(env), db: database.db, clock: systemClock }),
    }),
  );
  return { app, env, database, calls };
}

/** The hidden CSRF field's value in a page. */
export function csrfFrom(html: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error("no _csrf field in the page");
  return token;
}

export async function signInLocally(agent: request.Agent, token = ADMIN_TOKEN): Promise<request.Response> {
  const page = await agent.get("/admin/login");
  return agent
    .post("/admin/login")
    .type("form")
    .send({ _csrf: csrfFrom(page.text), token });
}

export function sessionCookie(res: request.Response): string | undefined {
  const cookies = ([] as string[]).concat(res.headers["set-cookie"] ?? []);
  return cookies.find((c) => c.startsWith("scim_admin_sid="));
}

/** The session id an `admin_sessions` row is keyed by, from a response that set the session cookie (`s:<sid>.<signature>`). */
export function sessionIdOf(res: request.Response): string {
  const value = sessionCookie(res)!.split(";")[0]!.split("=")[1]!;
  return decodeURIComponent(value).slice(2).split(".")[0]!;
}

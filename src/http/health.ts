import { Router } from "express";
import type { MappingAgreement } from "../mapping/desiredAccess.js";

/** What the probe asks of the database (src/db/database.ts): that it answers, and that its migrations are applied. */
export type DatabaseProbe = { ping(): Promise<void>; isMigrated(): Promise<boolean> };

/**
 * /healthz: the process is alive. /readyz: the database answers, every migration is applied, and
 * the process is not shutting down (`draining`: from the first SIGTERM on, so load balancers stop sending);
 * its `mapping` says whether this replica's mapping file is the one in force.
 */
export function healthRouter(
  db: DatabaseProbe,
  draining: () => boolean = () => false,
  mappingAgreement?: () => Promise<MappingAgreement>,
  readinessTimeoutMs = READINESS_TIMEOUT_MS,
): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    if (draining()) {
      res.status(503).json({ status: "not ready", reason: "shutting down" });
      return;
    }
    const { status, body } = await withinTime(readiness(db, mappingAgreement), readinessTimeoutMs);
    res.status(status).json(body);
  });
  return router;
}

/**
 * How long /readyz waits for the database before it answers 503. A probe that gets no answer is
 * as bad as a 503 for the caller, and worse to read: with PostgreSQL down and the pool's
 * connections busy, a query waits for a connection for up to the pool's 5 s, longer than a
 * Kubernetes probe's default 1 s timeout or a load balancer's.
 */
const READINESS_TIMEOUT_MS = 2_000;

type Readiness = { status: number; body: Record<string, unknown> };

async function readiness(db: DatabaseProbe, mappingAgreement?: () => Promise<MappingAgreement>): Promise<Readiness> {
  try {
    await db.ping();
    if (!(await db.isMigrated())) return { status: 503, body: { status: "not ready", reason: "migrations pending" } };
    // A mapping file that is not the one in force leaves the process ready (it serves SCIM), and says so.
    return {
      status: 200,
      body: { status: "ready", ...(mappingAgreement ? { mapping: await mappingAgreement() } : {}) },
    };
  } catch {
    return { status: 503, body: { status: "not ready", reason: "database unreachable" } };
  }
}

/** The check's answer, or 503 when it takes longer than `ms` (the check never rejects: it is left to end on its own). */
async function withinTime(check: Promise<Readiness>, ms: number): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Readiness>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({ status: 503, body: { status: "not ready", reason: `the database did not answer within ${ms} ms` } }),
      ms,
    );
  });
  try {
    return await Promise.race([check, late]);
  } finally {
    clearTimeout(timer);
  }
}

import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Database } from "../db/database.js";
import type { Clock } from "../clock.js";
import { ConflictError } from "../errors.js";
import { getAccounts } from "../db/platform/accountRepository.js";
import { listUsersWithGroups } from "../db/idp/userReconcileReads.js";
import { listActiveDenies } from "../db/campaigns/denyRepository.js";
import { countIdpUsers, listOrphanAccounts } from "../db/reconcile/resyncRepository.js";
import { markUsersDirty } from "../db/reconcile/queueRepository.js";
import { writeLogEntry } from "../db/reconcile/logRepository.js";
import {
  getRun,
  insertRun,
  queueVerifications,
  savePlanProgress,
  setRunPhase,
  type ResyncRun,
} from "../db/reconcile/resyncRepository.js";
import { sqlState } from "../errors.js";
import { log } from "../logging/logger.js";
import { notify } from "../notify/events.js";
import { resyncFailed } from "../notify/platformEvents.js";
import { desiredAccessOf, type DesiredAccess } from "../mapping/desiredAccess.js";
import { planReconcile, type Policies } from "../reconcile/planner.js";
import { callsOf } from "./resyncCost.js";

/**
 * Full resync, phase 1 (free): re-derive every user's desired dashboard user from the IdP state
 * and the mapping, and queue the ones that differ from what was last applied, behind live IdP
 * changes. With `verify`, every platform account is also filed for verification (phase 2, done
 * by the reconcile workers with spare budget only). A dry run counts what would change and what
 * it would cost, and queues nothing. Progress is saved per batch, so a run resumes after a crash.
 */

/** `desired`: the mapping in force and a user's desired access (src/mapping/desiredAccess.ts). */
export type ResyncDeps = { db: Database; clock: Clock; desired: DesiredAccess; policies: Policies };
export type ResyncRequest = {
  dryRun: boolean;
  verify: boolean;
  trigger: "cron" | "cli" | "ui" | "api";
  actor: string | null;
};
export type ProgressListener = (run: { evaluated: number; total: number; queued: number }) => void;

const BATCH = 2500;
export const PROCESS_ID = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/** Creates the run; phase 1 is then run by `runPlanPhase` (in the background for the API and cron). */
export async function createRun(deps: ResyncDeps, request: ResyncRequest): Promise<string> {
  const id = randomUUID();
  try {
    await insertRun(deps.db, {
      id,
      ...request,
      startedAt: deps.clock.now(),
      owner: PROCESS_ID,
      usersTotal: await countIdpUsers(deps.db),
    });
  } catch (error) {
    if (sqlState(error) === "23505")
      throw new ConflictError("A full resync is already running; wait for it or watch it under Runs", "uniqueness");
    throw error;
  }
  // Every start is written down with who (or which schedule) started it.
  await writeLogEntry(deps.db, {
    at: deps.clock.now(),
    action: "resync",
    outcome: "succeeded",
    trigger: request.actor
      ? { kind: "admin", actor: request.actor, runId: id, via: request.trigger, dryRun: request.dryRun }
      : { kind: "resync", runId: id, via: request.trigger },
    actor: request.actor,
  });
  log.info("resync", "resync started", {
    runId: id,
    dryRun: request.dryRun,
    verify: request.verify,
    trigger: request.trigger,
  });
  return id;
}

/** Starts a run and works phase 1 in the background; returns the run id at once. */
export async function startResync(deps: ResyncDeps, request: ResyncRequest): Promise<string> {
  const id = await createRun(deps, request);
  void runPlanPhase(deps, id).catch((error) => log.error("resync", "resync phase 1 failed", { runId: id, error }));
  return id;
}

/** Phase 1 from the run's saved cursor to the end; marks the run failed if it throws. */
export async function runPlanPhase(deps: ResyncDeps, runId: string, onProgress?: ProgressListener): Promise<ResyncRun> {
  const run = await getRun(deps.db, runId);
  if (!run) throw new Error(`no resync run ${runId}`);
  try {
    await planUsers(deps, run, onProgress);
    await planOrphans(deps, run);
    return await finishPlanPhase(deps, runId);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await deps.db.transaction(async (tx) => {
      await setRunPhase(tx, runId, "done", { status: "failed", finishedAt: deps.clock.now(), error: message });
      await notify(tx, resyncFailed(deps.clock.now(), { id: runId, error: message }));
    });
    throw error;
  }
}

async function planUsers(deps: ResyncDeps, run: ResyncRun, onProgress?: ProgressListener): Promise<void> {
  const { db } = deps;
  const summary = { ...run.planSummary };
  let evaluated = run.usersEvaluated;
  let queued = run.usersQueued;
  // The next batch is read while this one is planned and written (the database and the CPU overlap).
  const read = (after: string | undefined) =>
    listUsersWithGroups(db, after, BATCH).then(async (users) => {
      const ids = users.map((u) => u.id);
      const [accounts, denies] = await Promise.all([getAccounts(db, ids), listActiveDenies(db, ids)]);
      return { users, accounts, denies };
    });
  for (let batch = await read(run.cursor ?? undefined); batch.users.length;) {
    const { users, accounts, denies } = batch;
    const next = read(users[users.length - 1]!.id);
    next.catch(() => undefined); // awaited below; keeps an early failure from going unhandled
    const mapping = await deps.desired.inForce(db);
    const changed: string[] = [];
    for (const user of users) {
      // A campaign's revoke holds through a resync; a deny the IdP no longer grants ends at the user's reconcile.
      const { desired, notGranted } = desiredAccessOf(user, denies.get(user.id) ?? [], mapping);
      const endsDenies = user.active && notGranted.length > 0; // as the reconciler's source decides
      if (endsDenies) changed.push(user.id);
      const plan = planReconcile(desired, accounts.get(user.id), deps.policies, {
        now: deps.clock.now(),
        equivalents: mapping.equivalents,
      });
      if (plan.action === "none") continue;
      if (!endsDenies) changed.push(user.id);
      summary[plan.action] = (summary[plan.action] ?? 0) + 1;
      summary.calls = (summary.calls ?? 0) + callsOf(plan);
    }
    const withAccounts = users.filter((u) => accounts.get(u.id)?.platformId).map((u) => u.id);
    if (run.verify) summary.verify = (summary.verify ?? 0) + withAccounts.length;
    if (!run.dryRun) {
      await db.transaction(async (tx) => {
        await markUsersDirty(tx, changed, { kind: "resync", runId: run.id });
        if (run.verify) await queueVerifications(tx, run.id, withAccounts);
      });
    }
    const cursor = users[users.length - 1]!.id;
    evaluated += users.length;
    queued += changed.length;
    await savePlanProgress(db, run.id, {
      cursor,
      orphanCursor: null,
      evaluated: users.length,
      queued: changed.length,
      summary,
    });
    onProgress?.({ evaluated, total: run.usersTotal, queued });
    batch = await next;
  }
}

/** Accounts whose IdP user is gone (deleted while the connector was down): their access must go. */
async function planOrphans(deps: ResyncDeps, run: ResyncRun): Promise<void> {
  const fresh = (await getRun(deps.db, run.id))!;
  const summary = { ...fresh.planSummary };
  for (let after = fresh.orphanCursor ?? undefined; ;) {
    const orphans = await listOrphanAccounts(deps.db, after, BATCH);
    if (!orphans.length) break;
    summary.deprovision = (summary.deprovision ?? 0) + orphans.filter((o) => o.platformId).length;
    summary.calls = (summary.calls ?? 0) + orphans.filter((o) => o.platformId).length;
    if (!run.dryRun)
      await deps.db.transaction((tx) =>
        markUsersDirty(
          tx,
          orphans.map((o) => o.userId),
          { kind: "resync", runId: run.id },
        ),
      );
    after = orphans[orphans.length - 1]!.userId;
    await savePlanProgress(deps.db, run.id, {
      cursor: fresh.cursor,
      orphanCursor: after,
      evaluated: 0,
      queued: orphans.length,
      summary,
    });
  }
}

async function finishPlanPhase(deps: ResyncDeps, runId: string): Promise<ResyncRun> {
  const run = (await getRun(deps.db, runId))!;
  const now = deps.clock.now();
  if (run.dryRun || !run.verify) {
    await setRunPhase(deps.db, runId, "done", { status: "succeeded", finishedAt: now });
  } else {
    await setRunPhase(deps.db, runId, "verify", { verifyTotal: run.planSummary.verify ?? 0 });
  }
  log.info("resync", "resync phase 1 done", {
    runId,
    evaluated: run.usersEvaluated,
    queued: run.usersQueued,
    verify: run.planSummary.verify ?? 0,
  });
  return (await getRun(deps.db, runId))!;
}

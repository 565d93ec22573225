import { getRun, listRuns, type ResyncRun } from "../../db/reconcile/resyncRepository.js";
import {
  createRun,
  runPlanPhase,
  startResync,
  type ProgressListener,
  type ResyncDeps,
  type ResyncRequest,
} from "../../jobs/resync.js";
import { resyncEta } from "../../jobs/resyncEta.js";
import type { BudgetPolicy } from "../../reconcile/budget/budget.js";
import { nextFiring, presentRun, type RunView } from "./runs.js";

/**
 * Full resyncs, the one front door the Runs page, the resync button, the JSON API (POST /resync,
 * GET /runs) and `scim-connector resync` call: start a run, list and show runs with their
 * verification ETA, and when the schedule fires next. Built once per process (service/http.ts).
 */
export type Resyncs = {
  /** Creates a run and works phase 1 in the background; the run id at once (409 while one runs). */
  start(request: ResyncRequest): Promise<string>;
  /** Creates a run and works phase 1 in this process, reporting its id and progress (the CLI). */
  runHere(
    request: ResyncRequest,
    onProgress?: ProgressListener,
    onCreated?: (runId: string) => void,
  ): Promise<ResyncRun>;
  /** The last 50 runs, newest first, each with its ETA. */
  list(): Promise<RunView[]>;
  /** The newest `count` runs without an ETA (the overview). */
  latest(count: number): Promise<RunView[]>;
  /** One run with its ETA; undefined when no run has that id. */
  get(runId: string): Promise<RunView | undefined>;
  /** When RESYNC_CRON fires next, or null when it is "off". */
  nextRunAt(): Date | null;
  /** RESYNC_VERIFY: whether a run started from the admin UI verifies accounts. */
  readonly verifyFromUi: boolean;
};

export type ResyncsDeps = {
  /** What a run reads and writes (the scheduler's too); its database and clock serve the reads here. */
  job: ResyncDeps;
  budget: BudgetPolicy;
  cron: string;
  verify: boolean;
};

export function createResyncs(deps: ResyncsDeps): Resyncs {
  const { db, clock } = deps.job;
  const withEta = async (run: ResyncRun, now: Date) => presentRun(run, await resyncEta(db, deps.budget, run, now));
  return {
    start: (request) => startResync(deps.job, request),
    runHere: async (request, onProgress, onCreated) => {
      const runId = await createRun(deps.job, request);
      onCreated?.(runId);
      return runPlanPhase(deps.job, runId, onProgress);
    },
    list: async () => {
      const now = clock.now();
      return Promise.all((await listRuns(db, 50)).map((run) => withEta(run, now)));
    },
    latest: async (count) => (await listRuns(db, count)).map((run) => presentRun(run, null)),
    get: async (runId) => {
      const run = await getRun(db, runId);
      return run && withEta(run, clock.now());
    },
    nextRunAt: () => nextFiring(deps.cron, clock.now()),
    verifyFromUi: deps.verify,
  };
}

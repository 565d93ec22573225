import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import type { Database } from "../db/database.js";
import type { DesiredAccess } from "../mapping/desiredAccess.js";
import { MappedDesiredState } from "../reconcile/desiredSource.js";
import type { Findings } from "./events.js";
import { analysePending, analysisPolicyFromEnv, type ManagedHandlers } from "./findings.js";
import {
  onManagedAccountEvent,
  onManagedAccountEvents,
  recordActivities,
  recordActivity,
  recordCatalogueEdit,
  type ManagedChangesDeps,
} from "./managedChanges.js";

/**
 * The analysis of the platform's record, built once per process and run by every import (the CLI,
 * the JSON API, the admin page, the S3 export's poller) after it stored its events: each event
 * decided once (findings.ts), the managed accounts' changes handled (managedChanges.ts). It costs
 * no platform call; what it asks of the platform (a lookup, a read, a write) is queued for the
 * discovery lane and the reconciler, which spend it from the budget.
 */
export function createPlatformRecordAnalysis(options: {
  env: Pick<
    Env,
    "PLATFORM_OUTSIDE_CHANGES" | "SECURITY_EVENTS_OWN_WRITE_WINDOW_MINUTES" | "SECURITY_EVENTS_CONNECTOR_ACTOR"
  >;
  db: Database;
  clock: Clock;
  desired: DesiredAccess;
  /** Wakes this process's discovery lane when a candidate was recorded. */
  onCandidate?: () => void;
}): () => Promise<Findings> {
  const { env, db, clock } = options;
  const managed: ManagedChangesDeps = {
    db,
    clock,
    outsideChanges: env.PLATFORM_OUTSIDE_CHANGES,
    source: new MappedDesiredState(db, options.desired, { clock }),
  };
  const handlers: ManagedHandlers = {
    onManagedAccountEvent: (event, userId) => onManagedAccountEvent(managed, event, userId),
    onManagedAccountEvents: (items) => onManagedAccountEvents(managed, items),
    recordActivity: async (event) => {
      await recordActivity(managed, event);
    },
    recordActivities: (events) => recordActivities(managed, events),
    recordCatalogueEdit: async (event) => {
      await recordCatalogueEdit(managed, event);
    },
  };
  const policy = analysisPolicyFromEnv(env);
  return () =>
    analysePending({
      db,
      clock,
      handlers,
      policy,
      ...(options.onCandidate ? { onCandidate: options.onCandidate } : {}),
    });
}

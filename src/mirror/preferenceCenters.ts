import { randomUUID } from "node:crypto";
import type { Database } from "../db/database.js";
import type { Clock } from "../clock.js";
import {
  claimPendingChanges,
  readyPreferenceCenterWorkspaces,
  takePaceSlot,
  type PushLogEntry,
  type Settlement,
} from "../db/mirror/syncRepository.js";
import type { RetryPolicy } from "../platform/transport.js";
import { REST_FAMILIES, type PlatformRestClient, type PreferenceCenterBody } from "../platform/rest.js";
import type { PendingChange, PreferenceCenterPayload } from "./batching.js";
import type { WorkspaceApiKeys } from "./config.js";
import { verdictOf, type SendVerdict } from "./pushing.js";
import { settleAndNotify } from "./settle.js";

/**
 * Preference centers: one PUT per changed page, at most `paceLimit` per window per workspace.
 * The pace is a slot taken in Postgres right before each attempt (the transport's `beforeSend`),
 * so replicas share it and a retried attempt is paced like a first one.
 */

export type PreferenceCenterDeps = {
  db: Database;
  rest: PlatformRestClient;
  apiKeys: WorkspaceApiKeys;
  clock: Clock;
  leaseMs: number;
  retry: RetryPolicy;
  paceLimit: number;
  paceWindowMs: number;
  signal: AbortSignal;
  /** Holds (pace exhausted, 429, bad key) by `holdKey(workspace)`, epoch ms; shared with the worker. */
  holds: Map<string, number>;
};

export type PreferenceCenterReport = {
  claimed: number;
  settlements: Settlement[];
  log: PushLogEntry[];
  deferred: { claimId: string; settlements: Settlement[] }[];
};

const holdKey = (workspace: string) => `preference_center:${workspace}`;

class PaceExhausted extends Error {
  constructor(readonly nextAt: Date) {
    super("preference-center pace exhausted");
  }
}

function preferenceCenterBody(p: PreferenceCenterPayload): PreferenceCenterBody {
  const body: PreferenceCenterBody = {
    preference_center_page_html: p.page_html,
    confirmation_page_html: p.confirmation_html,
  };
  if (p.name !== null) body.name = p.name;
  if (p.title !== null) body.preference_center_title = p.title;
  if (p.state !== null) body.state = p.state;
  if (p.options !== null) body.options = p.options;
  return body;
}

export async function pushPreferenceCenters(deps: PreferenceCenterDeps): Promise<PreferenceCenterReport> {
  const report: PreferenceCenterReport = { claimed: 0, settlements: [], log: [], deferred: [] };
  for (const workspace of await readyPreferenceCenterWorkspaces(deps.db, deps.clock.now())) {
    for (let sent = 0; sent < deps.paceLimit; sent++) {
      if ((deps.holds.get(holdKey(workspace)) ?? 0) > deps.clock.now().getTime()) break;
      const claimId = randomUUID();
      const [row] = await claimPendingChanges(deps.db, {
        kind: "preference_center",
        claimId,
        limit: 1,
        now: deps.clock.now(),
        leaseMs: deps.leaseMs,
        batchKey: workspace,
      });
      if (!row) break;
      report.claimed++;
      const change = row as PendingChange<PreferenceCenterPayload>;
      const settlement = await pushOne(deps, workspace, change, report);
      const deferred = await settleAndNotify(deps, "preference_center", claimId, [settlement]);
      if (deferred.length) report.deferred.push({ claimId, settlements: deferred });
      report.settlements.push(settlement);
      if (settlement.outcome === "release") break;
    }
  }
  return report;
}

async function pushOne(
  deps: PreferenceCenterDeps,
  workspace: string,
  change: PendingChange<PreferenceCenterPayload>,
  report: PreferenceCenterReport,
): Promise<Settlement> {
  const { key, version } = change;
  const apiKey = deps.apiKeys[workspace];
  if (!apiKey) {
    return {
      key,
      version,
      outcome: "park",
      reason: `no API key for workspace "${workspace}": add it to PLATFORM_WORKSPACE_API_KEYS, then requeue`,
    };
  }
  let verdict: SendVerdict;
  try {
    const outcome = await deps.rest.putPreferenceCenter(
      workspace,
      change.payload.id,
      preferenceCenterBody(change.payload),
      {
        apiKey,
        retry: deps.retry,
        signal: deps.signal,
        beforeSend: async () => {
          const slot = await takePaceSlot(
            deps.db,
            REST_FAMILIES.preferenceCenter(workspace),
            deps.clock.now(),
            deps.paceLimit,
            deps.paceWindowMs,
          );
          if (!slot.granted) throw new PaceExhausted(slot.nextAt);
        },
      },
    );
    verdict = verdictOf(outcome);
  } catch (error) {
    if (!(error instanceof PaceExhausted)) throw error;
    deps.holds.set(holdKey(workspace), error.nextAt.getTime());
    return { key, version, outcome: "release" };
  }
  const entry: PushLogEntry = {
    kind: "preference_center",
    endpoint: "PUT /preference_center/v1/{id}",
    workspace,
    changes: 1,
    outcome: "ok",
  };
  if (verdict.kind === "ok") {
    report.log.push({ ...entry, status: verdict.status });
    return { key, version, outcome: "ack" };
  }
  if (verdict.kind === "rejected") {
    report.log.push({ ...entry, outcome: "rejected", status: verdict.status, detail: verdict.message });
    return { key, version, outcome: "park", reason: `platform refused (HTTP ${verdict.status}): ${verdict.message}` };
  }
  report.log.push({
    ...entry,
    outcome: verdict.cause === "rate_limited" ? "rate_limited" : "retry",
    status: verdict.status,
    detail: verdict.reason,
  });
  const holdMs = verdict.until
    ? verdict.until.getTime()
    : deps.clock.now().getTime() + (verdict.cause === "auth" ? 60_000 : 5_000);
  deps.holds.set(holdKey(workspace), holdMs);
  return { key, version, outcome: "release", reason: verdict.reason };
}

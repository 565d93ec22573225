import { randomUUID } from "node:crypto";
import { Registry } from "prom-client";
import { setTimeout as delay } from "node:timers/promises";
import type { Database } from "../db/database.js";
import { systemClock, type Clock } from "../clock.js";
import {
  claimPendingChanges,
  prunePushLog,
  recordPushes,
  type MirrorKind,
  type PushLogEntry,
  type Settlement,
} from "../db/mirror/syncRepository.js";
import { BackgroundLoop, LoopWorker } from "../backgroundLoop.js";
import { log } from "../logging/logger.js";
import type { RetryPolicy } from "../platform/transport.js";
import type { QuarantineGate } from "../platform/quarantine.js";
import { REST_FAMILIES, type PlatformRestClient } from "../platform/rest.js";
import { batchSpecs, pushLogEntries, requestBatches, sent, type BatchKind, type BatchSpec } from "./batchKinds.js";
import { MAX_IDENTIFIERS_PER_ARRAY, planPushes, toUnits, type PendingChange } from "./batching.js";
import type { WorkspaceApiKeys } from "./config.js";
import { createMirrorMetrics, type MirrorMetrics } from "./metrics.js";
import { MIRROR_RATE_LIMITS, TokenBucket, type BucketRule } from "./pacing.js";
import { pushPreferenceCenters } from "./preferenceCenters.js";
import { forEachLimited, pushWithBisection, verdictOf, type PushResult, type SendVerdict } from "./pushing.js";
import { addReports, countSettlements, emptyReport, type CycleReport } from "./report.js";
import { settleAndNotify } from "./settle.js";

export type { CycleReport } from "./report.js";

/**
 * The mirror sync: claims pending mirror changes, batches them to the API's maxima, pushes them
 * and settles each change by the version it pushed. Level-triggered like the reconciler: a cycle
 * reads whatever is pending now and never depends on which write woke it. Safe to run on every
 * replica at once (claims are leases taken with SKIP LOCKED).
 *
 * Past ~300 lines: the cycle (claim, plan, push, settle) reads top to bottom; its pure parts are
 * apart (batching.ts, pacing.ts, pushing.ts, settle.ts).
 */

export type MirrorSyncWorkerOptions = {
  db: Database;
  /** Its counters, on the service's registry (`ServiceMetrics.mirror`); without it, on a registry nobody scrapes. */
  metrics?: MirrorMetrics;
  rest: PlatformRestClient;
  apiKeys: WorkspaceApiKeys;
  clock?: Clock;
  /** How long a claim is ours; must outlast a request with its retries. */
  leaseMs?: number;
  pollIntervalMs?: number;
  /** Requests in flight at once per endpoint family. */
  concurrency?: number;
  /** Requests' worth of changes claimed per cycle. */
  emailRequestsPerClaim?: number;
  subscriptionRequestsPerClaim?: number;
  entriesPerSubscriptionRequest?: number;
  retry?: RetryPolicy;
  /**
   * While changes keep arriving (the newest claimed one is younger than `lingerMs`), only full
   * arrays in full requests are sent; partial ones wait, at most `maxLingerMs` after their oldest
   * change. Trades a little latency for the minimum number of requests during bulk loads.
   */
  lingerMs?: number;
  maxLingerMs?: number;
  preferenceCenterPace?: { limit: number; windowMs: number };
  rateLimits?: { emailStatus?: BucketRule; subscriptionSet?: BucketRule };
  pushLogRetentionDays?: number;
  /** The platform quarantine: a quarantined family's changes are not claimed (they stay pending). */
  gate?: QuarantineGate;
};

/** Worker default: a few quick retries; a 429 is handed back at once (the family is held instead of blocking the loop). */
const MIRROR_RETRY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 2_000, maxRateLimitWaitMs: 0 };

export class MirrorSyncWorker extends LoopWorker {
  private readonly db: Database;
  private readonly clock: Clock;
  private readonly leaseMs: number;
  private readonly retry: RetryPolicy;
  private readonly specs: BatchSpec[];
  private readonly buckets: Record<BatchKind, TokenBucket>;
  /** Family (or preference-center workspace) → epoch ms until which it is held back. */
  private readonly holds = new Map<string, number>();
  private readonly failures = new Map<string, number>();
  private readonly cursors = new Map<MirrorKind, string>();
  private readonly deferred: { kind: MirrorKind; claimId: string; settlements: Settlement[]; tries: number }[] = [];
  protected readonly loop: BackgroundLoop;
  private lastHousekeeping = 0;
  private readonly metrics: MirrorMetrics;

  constructor(private readonly options: MirrorSyncWorkerOptions) {
    super();
    this.db = options.db;
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics ?? createMirrorMetrics(new Registry());
    this.leaseMs = options.leaseMs ?? 120_000;
    this.retry = options.retry ?? MIRROR_RETRY;
    this.specs = batchSpecs(options.rest, this.retry, options);
    this.buckets = {
      email: new TokenBucket(options.rateLimits?.emailStatus ?? MIRROR_RATE_LIMITS.emailStatus),
      subscription_group: new TokenBucket(options.rateLimits?.subscriptionSet ?? MIRROR_RATE_LIMITS.subscriptionSet),
    };
    const pollMs = options.pollIntervalMs ?? 1_000;
    this.loop = new BackgroundLoop({
      category: "mirror",
      intervalMs: pollMs,
      pass: () => this.pass(),
      // The database restarting, most likely: claims are leases, so nothing is lost meanwhile.
      failure: (_error, failures) => ({
        message: "mirror sync cycle failed",
        retryInMs: Math.min(30_000, pollMs * 2 ** Math.min(failures, 5)),
      }),
    });
  }

  /** One pass over every kind: at most one claim of emails, one of subscriptions, and the preference centers the pace allows. */
  async runOnce(): Promise<CycleReport> {
    await this.retryDeferred();
    const reports = await Promise.all([
      ...this.specs.map((spec) => this.cycleBatch(spec)),
      this.cyclePreferenceCenters(),
    ]);
    return reports.reduce(addReports, emptyReport());
  }

  /** Runs cycles until one finds nothing to claim (for tests and benchmarks). */
  async drain(maxCycles = 100_000): Promise<CycleReport> {
    let total = emptyReport();
    for (let i = 0; i < maxCycles; i++) {
      const report = await this.runOnce();
      total = addReports(total, report);
      if (report.claimed === 0 && this.deferred.length === 0) break;
      // Claimed but nothing sent: partial arrays lingering for more changes, or a held family.
      if (report.pushed + report.parked === 0) await delay(20);
    }
    return total;
  }

  /** A cycle, then how long to wait: nothing sent, the poll interval; mostly lingering, a moment for the arrays to fill; else none. */
  private async pass(): Promise<number | void> {
    const report = await this.runOnce();
    await this.housekeeping();
    if (report.pushed + report.parked === 0) return undefined;
    return report.lingering > report.pushed ? Math.max(50, (this.options.lingerMs ?? 500) / 2) : 0;
  }

  /** Every hour: prune the push log (the backlog gauges are ServiceMetrics', read at scrape time). */
  private async housekeeping(): Promise<void> {
    const now = this.clock.now();
    if (now.getTime() - this.lastHousekeeping < 15_000) return;
    const hourMark = Math.floor(now.getTime() / 3_600_000) !== Math.floor(this.lastHousekeeping / 3_600_000);
    this.lastHousekeeping = now.getTime();
    if (hourMark)
      await prunePushLog(this.db, new Date(now.getTime() - (this.options.pushLogRetentionDays ?? 30) * 86_400_000));
  }

  private held(family: string): boolean {
    return (this.holds.get(family) ?? 0) > this.clock.now().getTime();
  }

  private async cycleBatch(spec: BatchSpec): Promise<CycleReport> {
    const report = emptyReport();
    const apiKey = this.options.apiKeys.default;
    if (!apiKey || this.held(spec.kind)) return report;
    const family = spec.kind === "email" ? REST_FAMILIES.emailStatus : REST_FAMILIES.subscriptionSet;
    const admission = this.options.gate ? await this.options.gate.admit(family) : "open";
    if (admission === "closed") return report;
    try {
      return await this.pushClaim(spec, apiKey, report);
    } finally {
      // Half-open: the claim's first request decided; an unused probe goes back.
      if (admission === "probe") await this.options.gate!.probeFinished(family);
    }
  }

  private async pushClaim(spec: BatchSpec, apiKey: string, report: CycleReport): Promise<CycleReport> {
    const claimId = randomUUID();
    const limit = spec.unitsPerRequest * MAX_IDENTIFIERS_PER_ARRAY * spec.requestsPerClaim;
    const claim = (fromBatchKey?: string) =>
      claimPendingChanges(this.db, {
        kind: spec.kind,
        claimId,
        limit,
        now: this.clock.now(),
        leaseMs: this.leaseMs,
        fromBatchKey,
      });
    let rows = await claim(this.cursors.get(spec.kind));
    // The cursor walks the batch keys round-robin; at the end it wraps to the start.
    if (!rows.length && this.cursors.get(spec.kind)) rows = await claim(undefined);
    if (!rows.length) return report;
    report.claimed = rows.length;

    const changes = rows as PendingChange<unknown>[];
    const full = rows.length === limit;
    const newestAgeMs = rows.reduce((min, r) => Math.min(min, r.changedAgeMs), Infinity);
    const oldestAgeMs = rows.reduce((max, r) => Math.max(max, r.firstChangedAgeMs), 0);
    const busy = newestAgeMs < (this.options.lingerMs ?? 500) && oldestAgeMs < (this.options.maxLingerMs ?? 30_000);
    const plan = planPushes(toUnits(changes), { unitsPerRequest: spec.unitsPerRequest, claimWasFull: full, busy });
    // A full claim continues from its last (cut) batch key; anything else wraps to the start.
    this.cursors.set(spec.kind, full ? changes[changes.length - 1].batchKey : "");

    const result: PushResult = {
      settlements: plan.leftover.map((c) => ({ key: c.key, version: c.version, outcome: "release" as const })),
      requests: [],
    };
    const asBatches = (cs: PendingChange<unknown>[]) => requestBatches(spec, cs);
    const claimedAt = this.clock.now().getTime();
    const send = (cs: PendingChange<unknown>[]): Promise<SendVerdict> => {
      // Once the platform failed for this claim, or half the lease is gone, the rest is released
      // unsent: a request still in flight when the lease ends could race another replica's newer push.
      if (result.retry && result.retry.cause !== "paced")
        return Promise.resolve({ kind: "retry", cause: "paced", reason: "platform failing" });
      if (this.clock.now().getTime() - claimedAt > this.leaseMs / 2)
        return Promise.resolve({ kind: "retry", cause: "paced", reason: "lease running out" });
      return this.send(spec, cs, apiKey);
    };
    await forEachLimited(
      plan.requests.map((units) => units.flatMap((u) => u.changes)),
      this.options.concurrency ?? 4,
      (batch) => pushWithBisection(batch, asBatches, send, result),
    );
    await this.settle(spec.kind, claimId, result.settlements);
    this.afterPush(spec.kind, result);
    const entries = pushLogEntries(spec, result);
    this.count(spec.kind, result.settlements, entries);
    await recordPushes(this.db, entries, this.clock.now());
    const requests = result.requests.filter((r) => sent(r.verdict)).length;
    return { ...report, ...countSettlements(result.settlements), requests, lingering: busy ? plan.leftover.length : 0 };
  }

  private async send(spec: BatchSpec, changes: PendingChange<unknown>[], apiKey: string): Promise<SendVerdict> {
    for (;;) {
      if (this.held(spec.kind)) return { kind: "retry", cause: "paced", reason: "family held" };
      const waitMs = this.buckets[spec.kind].take(this.clock.now().getTime());
      if (waitMs === 0) break;
      // Short waits keep the batch together; a long one (the hourly limit used up) releases it.
      if (waitMs > 2_000) return { kind: "retry", cause: "paced", reason: "rate limit reached locally" };
      await delay(waitMs);
    }
    return verdictOf(await spec.send(toUnits(changes), apiKey, this.loop.signal));
  }

  /** Holds the family after a failure: until the platform's reset for a 429, growing backoff otherwise. */
  private afterPush(family: string, result: PushResult): void {
    const retry = result.retry;
    if (!retry) {
      this.failures.delete(family);
      return;
    }
    const now = this.clock.now().getTime();
    if (retry.until) this.holds.set(family, retry.until.getTime());
    else if (retry.cause === "auth") {
      this.holds.set(family, now + 60_000);
      log.error("mirror", "platform refused the API key", { family, status: retry.status });
    } else if (retry.cause === "transient") {
      const failures = (this.failures.get(family) ?? 0) + 1;
      this.failures.set(family, failures);
      this.holds.set(family, now + Math.min(60_000, 500 * 2 ** Math.min(failures, 7)));
    }
  }

  private async cyclePreferenceCenters(): Promise<CycleReport> {
    const pace = this.options.preferenceCenterPace ?? MIRROR_RATE_LIMITS.preferenceCenter;
    const result = await pushPreferenceCenters({
      db: this.db,
      rest: this.options.rest,
      apiKeys: this.options.apiKeys,
      clock: this.clock,
      leaseMs: this.leaseMs,
      retry: this.retry,
      paceLimit: pace.limit,
      paceWindowMs: pace.windowMs,
      signal: this.loop.signal,
      holds: this.holds,
    });
    for (const d of result.deferred) this.deferred.push({ kind: "preference_center", ...d, tries: 0 });
    this.count("preference_center", result.settlements, result.log);
    await recordPushes(this.db, result.log, this.clock.now());
    return {
      claimed: result.claimed,
      ...countSettlements(result.settlements),
      requests: result.log.length,
      lingering: 0,
    };
  }

  private async settle(kind: MirrorKind, claimId: string, settlements: Settlement[]): Promise<void> {
    let deferred: Settlement[];
    try {
      deferred = await settleAndNotify({ db: this.db, clock: this.clock }, kind, claimId, settlements);
    } catch (error) {
      // The database went away after the pushes (a restart): settle as soon as it is back,
      // instead of leaving the claim to wait out its lease (2 minutes by default).
      this.deferred.push({ kind, claimId, settlements, tries: 0 });
      throw error;
    }
    if (deferred.length) this.deferred.push({ kind, claimId, settlements: deferred, tries: 0 });
  }

  /** Settlements that met a row an ETL transaction was writing, or a database away: tried again each cycle until the lease would have run out. */
  private async retryDeferred(): Promise<void> {
    const maxTries = Math.max(1, Math.floor(this.leaseMs / (this.options.pollIntervalMs ?? 1_000)));
    const entries = this.deferred.splice(0);
    for (const [i, entry] of entries.entries()) {
      let left: Settlement[];
      try {
        left = await settleAndNotify({ db: this.db, clock: this.clock }, entry.kind, entry.claimId, entry.settlements);
      } catch (error) {
        this.deferred.push(...entries.slice(i)); // the database is still away: keep them for the next cycle
        throw error;
      }
      if (left.length && entry.tries + 1 < maxTries) {
        this.deferred.push({ ...entry, settlements: left, tries: entry.tries + 1 });
      }
    }
  }

  private count(kind: MirrorKind, settlements: Settlement[], entries: PushLogEntry[]): void {
    const { pushed, parked } = countSettlements(settlements);
    if (pushed) this.metrics.changesPushed.inc({ kind }, pushed);
    if (parked) {
      this.metrics.changesParked.inc({ kind }, parked);
      log.warn("mirror", "changes parked", { kind, parked });
    }
    for (const e of entries) this.metrics.requests.inc({ kind, outcome: e.outcome });
  }
}

import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Database } from "../db/database.js";
import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import {
  claimProbe,
  enterQuarantine,
  failProbe,
  getQuarantine,
  liftQuarantine,
  listQuarantines,
  releaseProbe,
  type QuarantineRow,
} from "../db/platform/quarantineRepository.js";
import { log } from "../logging/logger.js";
import { notify, resolve } from "../notify/events.js";
import { quarantineEnded, quarantineStarted } from "../notify/platformEvents.js";
import type { HttpOutcome } from "./transport.js";
import { REST_FAMILIES } from "./rest.js";
import { SCIM_FAMILY } from "./scim.js";
import {
  classifyCall,
  defaultQuarantineRules,
  emptyWindow,
  probeVerdict,
  recordCall,
  statusOf,
  tripOf,
  type CallWindow,
  type QuarantineRules,
} from "./quarantineRules.js";

export { type QuarantineRules } from "./quarantineRules.js";

/**
 * Pauses platform work for a family whose calls keep failing (rules in quarantineRules.ts).
 *
 * - Each replica counts its own calls (the transport reports every attempt to `observe`); the
 *   replica that trips a family writes the row to `platform_quarantine`, and every replica reads
 *   that table (cached for `checkMs`) before claiming work of the family (`admit`), so one
 *   replica's discovery pauses all of them. Nothing is dropped: the work stays in its queue.
 * - After the cooling period one replica takes the probe (a claim in the table) and sends one
 *   call of real work: a healthy answer lifts the quarantine, a failure starts another cooling
 *   period (half-open, as in a circuit breaker).
 * - An admin lifts it at once with `resume` (admin API and UI).
 */

export type Admission = "open" | "closed" | "probe";

/** What a worker asks before claiming work for a family: admitted, paused, or the one probe (see PlatformQuarantine). */
export type QuarantineGate = {
  admit(family: string): Promise<Admission>;
  /** The probe's unit of work is over (its first call decided, or it made none: the probe goes back). */
  probeFinished(family: string): Promise<void>;
};

/**
 * The families whose workers check the quarantine before claiming work. Preference centers are
 * paced per workspace through a shared slot table and are not quarantined (their failures are
 * held back by the mirror worker's own backoff).
 */
export const QUARANTINED_FAMILIES: ReadonlySet<string> = new Set([
  SCIM_FAMILY,
  REST_FAMILIES.emailStatus,
  REST_FAMILIES.subscriptionSet,
]);

export type QuarantineView = QuarantineRow & { state: "cooling" | "awaiting-probe" | "probing" };

export class PlatformQuarantine implements QuarantineGate {
  readonly replica: string;
  private readonly windows = new Map<string, CallWindow>();
  private readonly cache = new Map<string, { row: QuarantineRow | undefined; at: number }>();
  /** Families whose probe this replica holds: the next reported call decides. */
  private readonly probes = new Set<string>();
  private pending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    readonly rules: QuarantineRules,
    replica?: string,
  ) {
    this.replica = replica ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  }

  /** The transport's observer: called after every attempt, never throws, never waits. */
  observe(family: string, outcome: HttpOutcome): void {
    if (!this.rules.enabled || !QUARANTINED_FAMILIES.has(family)) return;
    const call = classifyCall(outcome);
    if (this.probes.has(family)) {
      const verdict = probeVerdict(call);
      if (verdict === "undecided") return;
      this.probes.delete(family);
      this.background(verdict === "resume" ? this.probeSucceeded(family) : this.probeFailed(family, outcome));
      return;
    }
    // Calls already in flight when the family was quarantined change nothing.
    if (this.cache.get(family)?.row) return;
    const window = recordCall(this.windows.get(family) ?? emptyWindow, call, this.rules);
    const trip = tripOf(window, this.rules);
    if (!trip) {
      this.windows.set(family, window);
      return;
    }
    this.windows.delete(family);
    const now = this.clock.now();
    const entry = {
      family,
      ...trip,
      lastStatus: statusOf(outcome),
      since: now,
      resumeAt: new Date(now.getTime() + this.rules.coolingMs),
      trippedBy: this.replica,
    };
    // Known at once in this replica, before the write lands.
    this.cache.set(family, {
      row: { ...entry, failedProbes: 0, probeOwner: null, probeUntil: null },
      at: now.getTime(),
    });
    this.background(
      this.db
        .transaction(async (tx) => {
          const row = await enterQuarantine(tx, entry);
          if (row) await notify(tx, quarantineStarted(row));
          return row;
        })
        .then((row) => {
          if (row)
            log.error("platform", "family quarantined", {
              family,
              reason: trip.reason,
              detail: trip.detail,
              status: entry.lastStatus,
              resumeAt: entry.resumeAt.toISOString(),
            });
          this.cache.delete(family);
        }),
    );
  }

  /** Whether a worker may claim work of this family now; "probe" means one call may go to decide. */
  async admit(family: string): Promise<Admission> {
    if (!this.rules.enabled) return "open";
    const row = await this.current(family);
    if (!row) return "open";
    const now = this.clock.now();
    if (row.resumeAt > now) return "closed";
    if (this.probes.has(family)) return "closed"; // another loop of this replica holds it
    if (!(await claimProbe(this.db, family, this.replica, now, new Date(now.getTime() + this.rules.probeTimeoutMs))))
      return "closed";
    this.probes.add(family);
    this.cache.delete(family);
    log.info("platform", "quarantine cooling over; probing", { family });
    return "probe";
  }

  /** After the probing worker's unit of work: a probe it did not use (no work, no call) goes back. */
  async probeFinished(family: string): Promise<void> {
    await this.pending;
    if (!this.probes.delete(family)) return;
    await releaseProbe(this.db, family, this.replica);
  }

  async list(): Promise<QuarantineView[]> {
    const now = this.clock.now();
    return (await listQuarantines(this.db)).map((row) => ({ ...row, state: stateOf(row, now) }));
  }

  /** Admin resume: lifts the quarantine at once. Undefined when the family was not quarantined. */
  async resume(family: string, actor: string): Promise<QuarantineRow | undefined> {
    const row = await this.lift(family, `resumed by ${actor}`);
    this.forget(family);
    if (row)
      log.warn("platform", "quarantine lifted by an admin", {
        family,
        actor,
        quarantinedForMs: this.clock.now().getTime() - row.since.getTime(),
      });
    return row;
  }

  /** Waits for the table writes started by `observe` (tests, shutdown). */
  async settled(): Promise<void> {
    await this.pending;
  }

  private async current(family: string): Promise<QuarantineRow | undefined> {
    const cached = this.cache.get(family);
    const nowMs = this.clock.now().getTime();
    if (cached && nowMs - cached.at < this.rules.checkMs) return cached.row;
    const row = await getQuarantine(this.db, family);
    // Lifted elsewhere: start counting afresh rather than re-trip on failures from before.
    if (cached?.row && !row) this.windows.delete(family);
    this.cache.set(family, { row, at: nowMs });
    return row;
  }

  private async probeSucceeded(family: string): Promise<void> {
    const row = await this.lift(family, "probe succeeded", this.replica);
    this.forget(family);
    if (row)
      log.warn("platform", "quarantine lifted: probe succeeded", {
        family,
        quarantinedForMs: this.clock.now().getTime() - row.since.getTime(),
      });
  }

  private async probeFailed(family: string, outcome: HttpOutcome): Promise<void> {
    const now = this.clock.now();
    const status = statusOf(outcome);
    const detail = `probe failed (${status ?? outcome.kind})`;
    const row = await failProbe(
      this.db,
      family,
      this.replica,
      new Date(now.getTime() + this.rules.coolingMs),
      detail,
      status,
    );
    this.cache.delete(family);
    if (row)
      log.error("platform", "quarantine continues: probe failed", {
        family,
        status,
        failedProbes: row.failedProbes,
        resumeAt: row.resumeAt.toISOString(),
      });
  }

  /** Deletes the row and, in the same transaction, queues quarantine.ended. */
  private lift(family: string, how: string, probeOwner?: string): Promise<QuarantineRow | undefined> {
    return this.db.transaction(async (tx) => {
      const row = await liftQuarantine(tx, family, probeOwner);
      if (row) await resolve(tx, quarantineEnded(this.clock.now(), row, how));
      return row;
    });
  }

  private forget(family: string): void {
    this.cache.delete(family);
    this.windows.delete(family);
    this.probes.delete(family);
  }

  private background(work: Promise<unknown>): void {
    const done = work.catch((error: unknown) => log.error("platform", "quarantine table write failed", { error }));
    this.pending = Promise.all([this.pending, done]).then(() => undefined);
  }
}

function stateOf(row: QuarantineRow, now: Date): QuarantineView["state"] {
  if (row.probeUntil && row.probeUntil > now) return "probing";
  return row.resumeAt > now ? "cooling" : "awaiting-probe";
}

export function quarantineRulesFromEnv(
  env: Pick<
    Env,
    | "QUARANTINE_ENABLED"
    | "QUARANTINE_AUTH_FAILURES"
    | "QUARANTINE_FAILURE_RATE_PERCENT"
    | "QUARANTINE_WINDOW"
    | "QUARANTINE_MIN_CALLS"
    | "QUARANTINE_COOLING_SECONDS"
    | "PLATFORM_TIMEOUT_MS"
  >,
): QuarantineRules {
  return {
    ...defaultQuarantineRules,
    enabled: env.QUARANTINE_ENABLED,
    authFailures: env.QUARANTINE_AUTH_FAILURES,
    failureRatePercent: env.QUARANTINE_FAILURE_RATE_PERCENT,
    window: env.QUARANTINE_WINDOW,
    minCalls: Math.min(env.QUARANTINE_MIN_CALLS, env.QUARANTINE_WINDOW),
    coolingMs: Math.round(env.QUARANTINE_COOLING_SECONDS * 1000),
    // A probing reconcile makes a few calls with retries; past this another replica may probe.
    probeTimeoutMs: Math.max(30_000, env.PLATFORM_TIMEOUT_MS * 4),
  };
}

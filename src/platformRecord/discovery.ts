/**
 * The budget's lowest lane: each account made by hand that the record shows (a candidate, findings.ts)
 * is confirmed by ONE lookup by userName, debited as `discover` in the shared ledger. It spends only
 * when the reconcile queue has nothing due (grants, reductions and verification go first), on
 * verification's allowance at most (src/reconcile/budget/budget.ts), never retried within a pass, at most
 * UNMANAGED_LOOKUPS_PER_DAY lookups per UTC day, and on one replica at a time. A confirmed account
 * raises platform.unmanaged_account once, in the transaction that records it.
 */
import { BackgroundLoop, LoopWorker } from "../backgroundLoop.js";
import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { countActionDebits } from "../db/reconcile/budgetRepository.js";
import { hasDueWork } from "../db/reconcile/queueReads.js";
import {
  markAdoptedByIdp,
  markAlerted,
  nextCandidate,
  recordLookup,
  withDiscoveryLock,
  type UnmanagedAccount,
} from "../db/platform/unmanagedAccountRepository.js";
import { log } from "../logging/logger.js";
import { notify } from "../notify/events.js";
import { unmanagedAccountFound } from "../notify/platformEvents.js";
import type { QuarantineGate } from "../platform/quarantine.js";
import { SCIM_FAMILY } from "../platform/scim.js";
import { windowStart, type BudgetPolicy } from "../reconcile/budget/budget.js";
import { debitBudget } from "../reconcile/budget/budgetLedger.js";
import { BudgetExhausted, type PlatformScimPort } from "../reconcile/ports.js";
import { holdsInWords } from "./unmanaged.js";

/** The ledger's action word for a discovery lookup (the overview's chart names it). */
const DISCOVER_ACTION = "discover";

export type DiscoveryDeps = {
  db: Database;
  clock: Clock;
  budget: BudgetPolicy;
  /** The platform's SCIM client, built without retries: a failed lookup waits for the next pass. */
  platform: Pick<PlatformScimPort, "findUserByUserName" | "readList">;
  /** UNMANAGED_LOOKUPS_PER_DAY. */
  lookupsPerDay: number;
  /** UNMANAGED_LOOKUP_POLL_MS: the wait between passes. */
  pollMs: number;
  gate?: QuarantineGate;
};

/** Why a pass stopped looking up. */
export type DiscoveryStop =
  "none-left" | "queue-busy" | "daily-cap" | "budget" | "quarantined" | "failed" | "another-replica" | "stopping";

export type DiscoveryPass = { lookups: number; confirmed: number; absent: number; stopped: DiscoveryStop };

/** How soon the lane looks again while the reconcile queue has work due (a query, no call). */
const QUEUE_BUSY_RETRY_MS = 2_000;

export class UnmanagedDiscovery extends LoopWorker {
  protected readonly loop: BackgroundLoop;

  constructor(private readonly deps: DiscoveryDeps) {
    super();
    this.loop = new BackgroundLoop({
      category: "platform-record",
      intervalMs: deps.pollMs,
      pass: async (signal) => {
        const pass = await this.runOnce(signal);
        if (pass.lookups) log.info("platform-record", "accounts made by hand looked up", pass);
        // Candidates wait for the queue: look again soon rather than a whole interval after it drains.
        return pass.stopped === "queue-busy" ? Math.min(deps.pollMs, QUEUE_BUSY_RETRY_MS) : undefined;
      },
      failure: () => ({ message: "discovery pass failed" }),
    });
  }

  /** One pass: look up candidates, oldest first, until none is left or a limit says stop. For tests and the loop. */
  async runOnce(signal?: AbortSignal): Promise<DiscoveryPass> {
    const pass: DiscoveryPass = { lookups: 0, confirmed: 0, absent: 0, stopped: "none-left" };
    const ran = await withDiscoveryLock(this.deps.db, async (): Promise<DiscoveryStop> => {
      await markAdoptedByIdp(this.deps.db);
      for (;;) {
        const stop = signal?.aborted ? "stopping" : await this.reasonToWait();
        if (stop) return stop;
        const candidate = await nextCandidate(this.deps.db);
        if (!candidate) return "none-left";
        const looked = await this.lookUp(candidate);
        if (looked !== "confirmed" && looked !== "absent") return looked;
        pass.lookups++;
        pass[looked]++;
      }
    });
    pass.stopped = ran ?? "another-replica";
    return pass;
  }

  /** What keeps the lane from spending now: the family quarantined, work due on the queue, the day's cap. */
  private async reasonToWait(): Promise<DiscoveryStop | undefined> {
    const { db, clock, gate } = this.deps;
    const admission = gate ? await gate.admit(SCIM_FAMILY) : "open";
    if (admission === "probe") await gate!.probeFinished(SCIM_FAMILY); // the probe is real work's, not ours
    if (admission !== "open") return "quarantined";
    const now = clock.now();
    if (await hasDueWork(db, now)) return "queue-busy";
    const today = await countActionDebits(db, DISCOVER_ACTION, windowStart(now, "utc-day"));
    if (today >= this.deps.lookupsPerDay) return "daily-cap";
    return undefined;
  }

  /** The one lookup of a candidate, debited just before it leaves; its answer recorded (and alerted) in one transaction. */
  private async lookUp(candidate: UnmanagedAccount): Promise<"confirmed" | "absent" | "budget" | "failed"> {
    const { db, clock, budget, platform } = this.deps;
    const beforeSend = async () => {
      const debit = await debitBudget(db, budget, clock.now(), { action: DISCOVER_ACTION, kind: "discover" });
      if (!debit.ok) throw new BudgetExhausted(debit.resetsAt);
    };
    let outcome;
    try {
      outcome = await platform.findUserByUserName(candidate.userName, beforeSend);
    } catch (error) {
      if (error instanceof BudgetExhausted) return "budget";
      throw error;
    }
    if (outcome.kind !== "ok") {
      log.warn("platform-record", "lookup of an account made by hand failed; tried again later", {
        outcome: outcome.kind,
        ...("status" in outcome ? { status: outcome.status } : {}),
      });
      return "failed";
    }
    const match = platform
      .readList(outcome.body)
      .find((r) => r.user.userName.toLowerCase() === candidate.userName.toLowerCase());
    const { companyPermissions, roles, workspaces, permissionModel } = match?.user ?? {};
    const found = match
      ? {
          platformId: match.id,
          permissions: {
            companyPermissions: companyPermissions ?? [],
            workspaces: workspaces ?? [],
            ...(roles ? { roles } : {}),
            ...(permissionModel ? { permissionModel } : {}),
          },
          // A strip PUTs the whole resource: what it must keep (docs/access-review.md, "Accounts made by hand").
          profile: {
            givenName: match.user.givenName,
            familyName: match.user.familyName,
            department: match.user.department,
          },
        }
      : null;
    await db.transaction(async (tx) => {
      const now = clock.now();
      const confirmed = await recordLookup(tx, candidate.userName, found, now);
      if (!confirmed) return;
      await notify(tx, unmanagedAccountFound(now, { ...confirmed, holds: holdsInWords(confirmed.permissions) }));
      await markAlerted(tx, confirmed.userName, now);
    });
    return found ? "confirmed" : "absent";
  }
}

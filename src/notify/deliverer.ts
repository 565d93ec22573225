import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Database } from "../db/database.js";
import type { Clock } from "../clock.js";
import {
  claimDeliveries,
  fanOutNotifications,
  pruneNotifications,
  settleDelivery,
  type ClaimedDelivery,
} from "../db/notify/notificationRepository.js";
import { BackgroundLoop, LoopWorker } from "../backgroundLoop.js";
import { log } from "../logging/logger.js";
import { MAX_RETRY_AFTER_MS, type Channel } from "./channels.js";
import type { ConditionChecks } from "./conditions.js";
import type { NotificationMessage } from "./messages.js";

/**
 * Sends the outbox (worker role, every replica). A cycle: run the periodic condition checks
 * (idp.silent, saml.certificate.expiring), fan new messages out to the configured channels, then
 * claim due deliveries (SKIP LOCKED, with a lease: each goes to one replica) and send them.
 *
 * Delivery is at least once, exactly once in every case but one: a sender that dies after the
 * receiver has taken the request and before the "sent" row commits leaves its claim to lapse
 * (`leaseMs`), and another sender sends the same message again, with the same `id`. A sender
 * killed before its request left (the commit → send window) costs only the lease wait.
 */

export type DelivererOptions = {
  db: Database;
  clock: Clock;
  channels: Channel[];
  /** PUBLIC_URL (or the listening URL), for links; none when unknown. */
  publicUrl: string;
  checks?: ConditionChecks;
  /** Incidents that are over are removed after this many days (RECONCILE_LOG_RETENTION_DAYS). */
  retentionDays?: number;
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs?: number;
  leaseMs: number;
  pollMs?: number;
  owner?: string;
};

const CHECK_EVERY_MS = 60_000;
const BATCH = 20;

export class NotificationDeliverer extends LoopWorker {
  readonly owner: string;
  /** Its signal is aborted by stop(): sends in flight fail at once and stay pending, so a shutdown does not wait on a slow receiver. */
  protected readonly loop: BackgroundLoop;
  private lastCheck = Number.NEGATIVE_INFINITY;
  private lastPrune = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: DelivererOptions) {
    super();
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
    this.loop = new BackgroundLoop({
      category: "notify",
      intervalMs: options.pollMs ?? 1_000,
      // A full batch: more may be due at once.
      pass: async () => ((await this.cycle()) === BATCH ? 0 : undefined),
      failure: () => ({ message: "notification cycle failed" }),
    });
  }

  /** One cycle; returns the deliveries it settled. Exposed for tests and the CLI. */
  async cycle(): Promise<number> {
    const { db, clock, channels, checks } = this.options;
    const now = clock.now();
    if (now.getTime() - this.lastCheck >= CHECK_EVERY_MS) {
      this.lastCheck = now.getTime();
      await checks?.run(now);
      await this.prune(now);
    }
    while (
      (await fanOutNotifications(
        db,
        channels.map((c) => c.name),
        now,
      )) > 0
    );
    const claimed = await claimDeliveries(db, this.owner, now, new Date(now.getTime() + this.options.leaseMs), BATCH);
    await Promise.all(claimed.map((delivery) => this.deliver(delivery)));
    return claimed.length;
  }

  /** At most hourly: incidents that are over and older than the retention. */
  private async prune(now: Date): Promise<void> {
    if (!this.options.retentionDays || now.getTime() - this.lastPrune < 3_600_000) return;
    this.lastPrune = now.getTime();
    const removed = await pruneNotifications(
      this.options.db,
      new Date(now.getTime() - this.options.retentionDays * 86_400_000),
    );
    if (removed) log.info("notify", "old notifications removed", { removed });
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const { db, clock, channels, leaseMs, maxAttempts } = this.options;
    const channel = channels.find((c) => c.name === delivery.channel);
    const key = { outboxId: delivery.outboxId, channel: delivery.channel, owner: this.owner };
    if (!channel) {
      // Configured when the message was fanned out, gone since: park rather than retry forever.
      await settleDelivery(db, key, {
        state: "parked",
        nextAttemptAt: clock.now(),
        error: "channel no longer configured",
      });
      return;
    }
    try {
      // Half the lease: a send that times out is settled before another sender may take it over.
      await channel.send(
        this.messageOf(delivery),
        AbortSignal.any([AbortSignal.timeout(Math.floor(leaseMs / 2)), this.loop.signal]),
      );
      await settleDelivery(db, key, { state: "sent", at: clock.now() });
      log.info("notify", "notification sent", {
        event: delivery.event,
        incidentId: delivery.incidentId,
        channel: channel.name,
        attempts: delivery.attempts,
      });
    } catch (error) {
      if (this.loop.signal.aborted) {
        // Shutting down: not the receiver's fault; due again at once for whoever runs next.
        await settleDelivery(db, key, {
          state: "pending",
          nextAttemptAt: clock.now(),
          error: "interrupted by a shutdown",
        });
        return;
      }
      const retryAfter = (error as { retryAfterMs?: number }).retryAfterMs ?? 0;
      // A receiver asking for more than a day (MAX_RETRY_AFTER_MS) is parked now, with that as its error.
      const tooLong = retryAfter === Infinity;
      const message = `${error instanceof Error ? error.message : String(error)}${tooLong ? `; Retry-After beyond ${MAX_RETRY_AFTER_MS / 3_600_000} h` : ""}`;
      const park = tooLong || delivery.attempts >= maxAttempts;
      const wait = tooLong ? 0 : Math.max(this.backoffMs(delivery.attempts), retryAfter);
      await settleDelivery(db, key, {
        state: park ? "parked" : "pending",
        nextAttemptAt: new Date(clock.now().getTime() + wait),
        error: message,
      });
      const fields = {
        event: delivery.event,
        incidentId: delivery.incidentId,
        channel: channel.name,
        attempts: delivery.attempts,
        error: message,
      };
      if (park) log.error("notify", "notification delivery parked", fields);
      else log.warn("notify", "notification delivery failed; will retry", { ...fields, retryInMs: wait });
    }
  }

  /** Exponential from baseDelayMs, capped (an hour by default), with up to 20% jitter so replicas spread out. */
  private backoffMs(attempts: number): number {
    const cap = this.options.maxDelayMs ?? 3_600_000;
    const delay = Math.min(cap, this.options.baseDelayMs * 2 ** Math.max(0, attempts - 1));
    return Math.round(delay * (1 + Math.random() * 0.2));
  }

  private messageOf(d: ClaimedDelivery): NotificationMessage {
    const base = this.options.publicUrl.replace(/\/$/, "");
    return {
      event: d.event,
      id: d.incidentId,
      occurredAt: new Date(d.occurredAt).toISOString(),
      summary: d.summary,
      details: d.details,
      url: base && d.linkPath ? `${base}${d.linkPath}` : null,
    };
  }
}

import { scimAnnouncedLimit } from "../platform/announcedLimit.js";
import { OAuthRepository } from "../db/auth/oauthRepository.js";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Database } from "../db/database.js";
import type { Clock } from "../clock.js";
import { alertFacts } from "../db/notify/notificationRepository.js";
import { log } from "../logging/logger.js";
import { createMirrorMetrics, type MirrorMetrics } from "../mirror/metrics.js";
import { mirrorLag } from "../mirror/status.js";
import { QUARANTINED_FAMILIES, type PlatformQuarantine } from "../platform/quarantine.js";
import type { BudgetPolicy } from "../reconcile/budget/budget.js";
import type { MappingAgreement } from "../mapping/desiredAccess.js";
import { queueStatus } from "../reconcile/queueStatus.js";

/**
 * The service's Prometheus metrics, on a registry per service (not prom-client's global one),
 * so that tests can run several services in one process. Counters and the SCIM latency
 * histogram are updated as things happen; everything stored in PostgreSQL (budget, queue, mirror
 * lag, quarantine) is read at scrape time, so every replica answers with the same shared truth.
 */

export type ScrapeSources = {
  db: Database;
  clock: Clock;
  budget: BudgetPolicy;
  quarantine: Pick<PlatformQuarantine, "list">;
  /** When SAML_IDP_CERT expires, if it is set and readable. */
  samlCertificateExpiresAt?: Date;
  /** IDP_SILENCE_HOURS, exported so the alert rule follows the setting (0: off). */
  idpSilenceHours?: number;
  /** Whether this process's mapping file is the mapping in force. */
  mappingAgreement?: () => Promise<MappingAgreement>;
};

const PREFIX = "scim_connector_";

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly reconcileOutcomes: Counter<"action" | "outcome">;
  readonly scimRequestDuration: Histogram<"method" | "route" | "status_class">;
  /** Failed authentications and those refused by the throttles (src/auth/authThrottle.ts), this process's share. */
  readonly authFailures: Counter<"surface">;
  readonly authThrottled: Counter<"surface" | "scope">;
  /** The mirror worker's counters (handed to it by service.ts). */
  readonly mirror: MirrorMetrics;
  private readonly gauges;

  constructor(private readonly sources: ScrapeSources) {
    const registers = [this.registry];
    // Process and Node.js metrics (CPU, memory, event-loop lag, GC, handles) under their standard names.
    collectDefaultMetrics({ register: this.registry });
    this.reconcileOutcomes = new Counter({
      name: `${PREFIX}reconcile_outcomes_total`,
      help: "Reconciliation log entries written, by action and outcome",
      labelNames: ["action", "outcome"],
      registers,
    });
    this.scimRequestDuration = new Histogram({
      name: `${PREFIX}scim_request_duration_seconds`,
      help: "IdP-facing SCIM request latency, by method, route template and status class",
      labelNames: ["method", "route", "status_class"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.authFailures = new Counter({
      name: `${PREFIX}auth_failures_total`,
      help: "Requests with a wrong credential, by surface (scim, admin-api, admin-login)",
      labelNames: ["surface"],
      registers,
    });
    this.authThrottled = new Counter({
      name: `${PREFIX}auth_throttled_total`,
      help: "Failed authentications answered 429 by the throttles, by surface and scope (address, global)",
      labelNames: ["surface", "scope"],
      registers,
    });
    this.mirror = createMirrorMetrics(this.registry);
    const gauge = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
      new Gauge<L>({ name: PREFIX + name, help, labelNames, registers });
    this.gauges = {
      budgetLimit: gauge("budget_limit_calls", "Platform SCIM calls allowed in the current budget window"),
      budgetUsed: gauge("budget_used_calls", "Platform SCIM calls debited in the current budget window"),
      budgetRemaining: gauge(
        "budget_remaining_calls",
        "Platform SCIM calls left in the window: ordinary work (reserve excluded) or with_reserve (deprovisions)",
        ["kind"],
      ),
      budgetResets: gauge("budget_resets_at_seconds", "When the budget window resets (Unix time)"),
      platformAnnouncedLimit: gauge(
        "platform_scim_announced_limit_calls",
        "The SCIM limit the platform's answers announce (X-RateLimit-Limit; absent until one is seen), beside budget_limit_calls",
      ),
      queueDepth: gauge("reconcile_queue_depth", "Users waiting in the reconcile queue, by priority", ["priority"]),
      queueSettling: gauge(
        "reconcile_queue_settling",
        "Users whose grants wait for them to be quiet before one call (the settle window)",
      ),
      queuePendingDeletes: gauge(
        "reconcile_pending_deletes",
        "Stripped accounts (no permissions, kept) whose DELETE waits for RECONCILE_DEPROVISION_GRACE_MS to end",
      ),
      queueParked: gauge("reconcile_queue_parked", "Users parked after a terminal failure (need an admin)"),
      mirrorPending: gauge("mirror_pending_rows", "Mirror changes not yet pushed, by mirror table", ["table"]),
      // By kind, as the mirror.parked alert rule (docs/alerts/) and the notification name it.
      mirrorParked: gauge("mirror_parked_changes", "Mirror changes parked, by kind", ["kind"]),
      mirrorOldest: gauge(
        "mirror_oldest_pending_seconds",
        "Age of the oldest mirror change not yet pushed, by mirror table (0 when none)",
        ["table"],
      ),
      quarantined: gauge("platform_quarantined", "1 while a platform family is quarantined (its work paused)", [
        "family",
      ]),
      legacyRefused: gauge(
        "platform_legacy_refused",
        "1 while the platform refuses legacy permission strings and the mapping still carries them (grants held)",
      ),
      heldForLegacy: gauge(
        "reconcile_held_for_legacy",
        "Grants held because the platform refuses the legacy permission strings they carry",
      ),
      holdsPending: gauge(
        "holds_pending",
        "Actions held for an admin's approval, by kind (deprovision, email_change)",
        ["kind"],
      ),
      idpLastRequest: gauge(
        "idp_last_request_seconds",
        "When the IdP last made an authenticated SCIM request (Unix time; 0 if never)",
      ),
      idpSilenceThreshold: gauge(
        "idp_silence_threshold_seconds",
        "IDP_SILENCE_HOURS in seconds: how long the IdP may be quiet before idp.silent (0: never)",
      ),
      notificationChannelFailing: gauge(
        "notification_channel_failing",
        "1 while a channel's latest settled delivery is parked; a later delivery sent clears it",
        ["channel"],
      ),
      notificationDeliveries: gauge(
        "notification_deliveries",
        "Notification deliveries in the outbox, by channel and state (pending, sent, parked)",
        ["channel", "state"],
      ),
      resyncLastFailed: gauge("resync_last_run_failed", "1 when the latest finished full resync failed"),
      samlCertificateExpires: gauge(
        "saml_certificate_expires_at_seconds",
        "When the IdP's SAML signing certificate (SAML_IDP_CERT) expires (Unix time)",
      ),
      clientSecretExpires: gauge(
        "oauth_client_secret_expires_at_seconds",
        "When each OAuth client's earliest-expiring active secret expires (Unix time; clients whose secrets never expire are absent)",
        ["client"],
      ),
      mappingFileInForce: gauge(
        "mapping_file_in_force",
        "1 when this process's mapping file is the mapping in force; 0 when another replica put a different one in force",
      ),
      mappingPlanningPaused: gauge(
        "mapping_planning_paused",
        "1 while this process cannot read the mapping in force and plans nothing until its file matches",
      ),
      databaseUp: gauge(
        "metrics_database_up",
        "0 when the last scrape could not read PostgreSQL (the stored gauges are then stale)",
      ),
    };
  }

  /** Prometheus text: this service's registry, the mirror worker's counters included. */
  async render(): Promise<string> {
    await this.refresh();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Reads the stored state into the gauges; a database outage leaves them stale and says so. */
  private async refresh(): Promise<void> {
    const { db, clock, budget, quarantine } = this.sources;
    const now = clock.now();
    const g = this.gauges;
    try {
      const [queue, mirror, quarantined, alerts, mapping, secrets, announced] = await Promise.all([
        queueStatus(db, budget, now),
        mirrorLag(db, now),
        quarantine.list(),
        alertFacts(db),
        this.sources.mappingAgreement?.(),
        new OAuthRepository(db).earliestSecretExpiries(now),
        scimAnnouncedLimit(db),
      ]);
      if (announced) g.platformAnnouncedLimit.set(announced.announced);
      if (mapping) {
        g.mappingFileInForce.set(mapping.planning === "file" ? 1 : 0);
        g.mappingPlanningPaused.set(mapping.planning === "paused" ? 1 : 0);
      }
      g.budgetLimit.set(queue.budget.limit);
      g.budgetUsed.set(queue.budget.used);
      g.budgetRemaining.set({ kind: "ordinary" }, queue.budget.remaining);
      g.budgetRemaining.set({ kind: "with_reserve" }, queue.budget.remainingWithReserve);
      g.budgetResets.set(Math.floor(queue.budget.resetsAt.getTime() / 1000));
      g.queueDepth.reset();
      for (const p of queue.pending) g.queueDepth.inc({ priority: p.name }, p.count);
      g.queueSettling.set(queue.settling.count);
      g.queuePendingDeletes.set(queue.pendingDeletes.count);
      g.queueParked.set(queue.parked);
      g.mirrorPending.reset();
      g.mirrorOldest.reset();
      g.mirrorParked.reset();
      for (const m of mirror) {
        g.mirrorPending.set({ table: m.table }, m.pending);
        g.mirrorParked.set({ kind: m.kind }, m.parked);
        g.mirrorOldest.set({ table: m.table }, m.lagSeconds ?? 0);
      }
      g.quarantined.reset();
      for (const family of QUARANTINED_FAMILIES) g.quarantined.set({ family }, 0);
      for (const q of quarantined) g.quarantined.set({ family: q.family }, 1);
      for (const kind of ["deprovision", "email_change"])
        g.holdsPending.set({ kind }, alerts.undecidedHolds[kind] ?? 0);
      g.idpLastRequest.set(alerts.idpLastRequestAt ? Math.floor(alerts.idpLastRequestAt.getTime() / 1000) : 0);
      g.idpSilenceThreshold.set((this.sources.idpSilenceHours ?? 0) * 3600);
      g.notificationChannelFailing.reset();
      for (const [channel, failing] of Object.entries(alerts.channelFailing))
        g.notificationChannelFailing.set({ channel }, failing ? 1 : 0);
      g.notificationDeliveries.reset();
      for (const d of alerts.deliveries) g.notificationDeliveries.set({ channel: d.channel, state: d.state }, d.n);
      g.resyncLastFailed.set(alerts.lastResyncFailed ? 1 : 0);
      g.legacyRefused.set(alerts.legacyRefused ? 1 : 0);
      g.heldForLegacy.set(alerts.heldForLegacy);
      if (this.sources.samlCertificateExpiresAt)
        g.samlCertificateExpires.set(Math.floor(this.sources.samlCertificateExpiresAt.getTime() / 1000));
      g.clientSecretExpires.reset();
      for (const s of secrets)
        g.clientSecretExpires.set({ client: s.clientName }, Math.floor(s.expiresAt.getTime() / 1000));
      g.databaseUp.set(1);
    } catch (error) {
      g.databaseUp.set(0);
      log.warn("metrics", "stored gauges not refreshed", { error });
    }
  }
}

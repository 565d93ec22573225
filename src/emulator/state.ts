import { ManualClock } from "../clock.js";
import { DashboardUserStore, type DashboardUser } from "./dashboard/users.js";
import { CompanyDirectory } from "./dashboard/directory.js";
import { FaultList } from "./pipeline/faults.js";
import { permissionModelOf, type PermissionsOption } from "./dashboard/permissionModel.js";
import { presentProfile, ProfileStore } from "./engagement/profiles.js";
import { RATE_LIMITS, RateLimiter, type RateLimitRule } from "./pipeline/rateLimits.js";
import { SecurityEventLog, type SecurityEvent } from "./security/events.js";

/**
 * Everything the emulator holds, in memory (a reset is instant). One instance per running
 * emulator; in-process tests read it directly through `RunningEmulator.state`.
 */

export type InvalidPhoneReason = "provider_error" | "deactivated";
export type InvalidPhone = { phone: string; invalid_detected_at: string; reason: InvalidPhoneReason };

export type PreferenceCenter = {
  preference_center_api_id: string;
  name?: string;
  preference_center_title: string;
  preference_center_page_html: string;
  confirmation_page_html: string;
  state: "active" | "draft";
  options: Record<string, unknown>;
  created_at: string;
  updated_at: string;
};

/** Data integration and sync job records are kept in the document's own shapes, as loaded. */
export type DataIntegration = Record<string, unknown> & { integration_id: string };
export type SyncJob = Record<string, unknown>;

/**
 * One SCIM user request as the platform saw it. `status` and `permissionsAfter` are filled in when
 * the answer has left: what the platform then holds for `userName` (null: no account).
 */
export type ScimJournalEntry = {
  at: number;
  method: string;
  userName: string | null;
  status?: number;
  permissionsAfter?: DashboardUser["permissions"] | null;
};

/** Requests kept in the log behind `GET /_emulator/requests` (between this and twice as many). */
const REQUEST_LOG_SIZE = 20_000;

export class EmulatorState {
  readonly profiles = new ProfileStore();
  /** The company's workspaces, teams, roles and permission sets, which dashboard users' grants name. */
  readonly directory = new CompanyDirectory();
  readonly dashboardUsers: DashboardUserStore;
  /** Hard-bounce list (`/email/blacklist`, `/email/blocklist`; emptied by `/email/bounce/remove`). */
  readonly hardBounces = new Set<string>();
  readonly spam = new Set<string>();
  readonly invalidPhones = new Map<string, InvalidPhone>();
  readonly preferenceCenters = new Map<string, PreferenceCenter>();
  integrations: DataIntegration[] = [];
  readonly integrationIds = new Set<string>();
  readonly syncJobs = new Map<string, SyncJob[]>();
  /** `"<METHOD> <path template>"` → requests received. */
  readonly requestCounts = new Map<string, number>();
  /** The last REQUEST_LOG_SIZE requests' wall-clock arrival times (ms) and route keys, oldest first. */
  readonly requestLog: { at: number; route: string }[] = [];
  readonly rateLimiter = new RateLimiter();
  readonly faults = new FaultList();
  /** The platform's Security Event record: dashboard actions and SCIM writes (src/emulator/security/events.ts). */
  readonly securityEvents = new SecurityEventLog();
  /** Called after each move of the clock by the control plane (the daily security export checks for a finished day). */
  readonly clockListeners = new Set<() => void>();

  /** The SCIM family's daily budget; 5,000 as documented unless a benchmark lifts it. */
  readonly scimDaily: RateLimitRule;
  /**
   * With `scimJournal`: every authenticated SCIM user request as it arrived, at the emulator's
   * clock, with the userName it concerns (from the body, the filter, or the account its id names;
   * null for an id the platform does not hold). Benchmarks count calls per account from it.
   */
  readonly scimJournal: ScimJournalEntry[] | undefined;

  constructor(
    readonly clock: ManualClock,
    options: {
      scimDailyLimit?: number | undefined;
      scimJournal?: boolean | undefined;
      permissions?: PermissionsOption | undefined;
    } = {},
  ) {
    this.dashboardUsers = new DashboardUserStore(this.directory, permissionModelOf(options.permissions ?? "legacy"));
    this.scimDaily = { ...RATE_LIMITS.scimDaily, limit: options.scimDailyLimit ?? RATE_LIMITS.scimDaily.limit };
    this.scimJournal = options.scimJournal ? [] : undefined;
  }

  nowMs(): number {
    return this.clock.now().getTime();
  }

  /** Moves the clock forward and tells the listeners. */
  advanceClock(ms: number): void {
    this.clock.advance(ms);
    for (const listener of this.clockListeners) listener();
  }

  /** Records a security event at the emulator's clock. */
  recordSecurityEvent(event: Omit<SecurityEvent, "at">): void {
    this.securityEvents.record({ at: this.nowMs(), ...event });
  }

  countRequest(key: string): void {
    this.requestCounts.set(key, (this.requestCounts.get(key) ?? 0) + 1);
    // Wall-clock time, not the emulator's clock: tests measure real pauses (Retry-After) with it.
    this.requestLog.push({ at: Date.now(), route: key });
    if (this.requestLog.length >= 2 * REQUEST_LOG_SIZE) this.requestLog.splice(0, REQUEST_LOG_SIZE);
  }

  /** Logged requests received at or after `sinceMs`, optionally only those whose route key contains `routePart`. */
  requestsSince(sinceMs: number, routePart = ""): { at: string; route: string }[] {
    return this.requestLog
      .filter((r) => r.at >= sinceMs && r.route.includes(routePart))
      .map((r) => ({ at: new Date(r.at).toISOString(), route: r.route }));
  }

  reset(): void {
    this.profiles.clear();
    this.dashboardUsers.clear();
    this.directory.clear();
    this.hardBounces.clear();
    this.spam.clear();
    this.invalidPhones.clear();
    this.preferenceCenters.clear();
    this.integrations = [];
    this.integrationIds.clear();
    this.syncJobs.clear();
    this.requestCounts.clear();
    this.requestLog.length = 0;
    this.rateLimiter.clear();
    this.faults.clear();
    this.securityEvents.clear();
  }

  stats() {
    return {
      requests: Object.fromEntries(this.requestCounts),
      scimDaily: { used: this.rateLimiter.used(this.scimDaily, this.nowMs()), limit: this.scimDaily.limit },
    };
  }

  dump() {
    return {
      now: this.clock.now().toISOString(),
      users: [...this.profiles.byId.values()].map(presentProfile),
      emailStates: Object.fromEntries(this.profiles.emailStates),
      deliverability: {
        hardBounces: [...this.hardBounces],
        spam: [...this.spam],
        invalidPhones: [...this.invalidPhones.values()],
      },
      dashboardUsers: this.dashboardUsers.list(),
      suspendedDashboardUsers: this.dashboardUsers.suspendedUserNames(),
      preferenceCenters: [...this.preferenceCenters.values()],
      integrations: this.integrations,
      syncJobs: Object.fromEntries(this.syncJobs),
      faults: this.faults.list(),
      permissions: this.dashboardUsers.model,
      directory: this.directory.dump(),
    };
  }
}

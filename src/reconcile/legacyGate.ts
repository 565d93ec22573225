import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import {
  clearLegacyRefused,
  getPermissionModelState,
  noteLegacyRefused,
  noteModelSeen,
  recordIdentifiers,
} from "../db/platform/identifierRepository.js";
import { log } from "../logging/logger.js";
import { legacyStringsIn, modelOfUser } from "../mapping/granular.js";
import type { DesiredDashboardUser } from "../mapping/types.js";
import { notify, resolve } from "../notify/events.js";
import { legacyRefused, legacyRefusedEnded } from "../notify/reconcileEvents.js";
import type { HttpOutcome } from "../platform/transport.js";
import type { PlatformAccount } from "../platform/scim.js";
import { errorDetail } from "./outcomes.js";

/**
 * What the reconciler learns of the platform's permission model from the answers it already
 * receives, at no call's cost: the identifiers of workspaces, teams, roles and permission sets
 * (with renames), which model the answers speak, and whether the platform refuses legacy strings.
 *
 * While it refuses them, a grant that carries a legacy string is held (filed `held-legacy` on the
 * queue, no call spent) with one `platform.legacy_refused` incident, until the mapping no longer
 * carries them (the mapping change marks the users again). Whether the platform refuses is read
 * from the database at most every REFUSAL_TTL_MS, so every replica sees it within that time.
 */

const REFUSAL_TTL_MS = 5_000;
const WRITE_EVERY_MS = 60_000;

export class LegacyGate {
  private refusing: { value: boolean; readAt: number } | undefined;
  /** kind:id → name and when it was last written, so an identifier seen again costs no statement. */
  private readonly known = new Map<string, { name: string; at: number }>();
  private readonly modelWritten = { legacy: 0, granular: 0 };

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  /** Whether the platform refuses legacy strings (as last seen by any replica). */
  async refusesLegacy(): Promise<boolean> {
    const now = this.clock.now().getTime();
    if (this.refusing && now - this.refusing.readAt < REFUSAL_TTL_MS) return this.refusing.value;
    const state = await getPermissionModelState(this.db);
    this.refusing = { value: state.legacyRefusedAt !== null, readAt: now };
    return this.refusing.value;
  }

  /**
   * Whether `outcome` is the platform refusing a legacy string that `sent` carried; a refusal is
   * recorded (and opens the incident when it is new).
   */
  async noteIfRefused(outcome: HttpOutcome, sent: DesiredDashboardUser): Promise<boolean> {
    if (outcome.kind !== "http_error") return false;
    const value = this.refusedValue(outcome.status, outcome.body, sent);
    if (value) await this.noteRefused(value, outcome.body);
    return value !== undefined;
  }

  /**
   * A 400 answer to a write that carried legacy strings, and whose words name one of them (or
   * say "legacy"): the platform's exact refusal is not published, so this is read from its words.
   * Returns the refused value, or undefined when the answer is something else.
   */
  private refusedValue(status: number, body: unknown, sent: DesiredDashboardUser): string | undefined {
    if (status !== 400) return undefined;
    const legacy = legacyStringsIn(sent);
    if (!legacy.length) return undefined;
    const detail = errorDetail(body);
    const named = legacy.find((p) => new RegExp(`(^|[^a-z_])${p}([^a-z_]|$)`).test(detail));
    return named ?? (/legacy/i.test(detail) ? legacy[0] : undefined);
  }

  /** Records the refusal; opens the incident (one message) when it is new. */
  private async noteRefused(value: string, body: unknown): Promise<void> {
    const now = this.clock.now();
    const detail = errorDetail(body);
    await this.db.transaction(async (tx) => {
      if (await noteLegacyRefused(tx, value, detail, now)) {
        await notify(tx, legacyRefused(now, { value, detail }));
        log.warn("reconcile", "the platform refuses legacy permission strings; grants carrying them are held", {
          value,
        });
      }
    });
    this.refusing = { value: true, readAt: now.getTime() };
  }

  /** A grant without legacy strings went out while the incident was open: it is over. */
  async noteGranularApplied(): Promise<void> {
    if (!(await this.refusesLegacy())) return;
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      if (await clearLegacyRefused(tx)) await resolve(tx, legacyRefusedEnded(now));
    });
    this.refusing = { value: false, readAt: now.getTime() };
  }

  /** Learns what an answer shows: its identifiers (and renames) and its model. */
  async learn(account: PlatformAccount): Promise<void> {
    const now = this.clock.now();
    const fresh = account.identifiers.filter((i) => {
      const seen = this.known.get(`${i.kind}:${i.id}`);
      return !seen || seen.name !== i.name || now.getTime() - seen.at >= WRITE_EVERY_MS;
    });
    if (fresh.length) {
      for (const rename of await recordIdentifiers(this.db, fresh, now))
        log.warn("reconcile", "renamed on the platform (same identifier)", { ...rename });
      for (const i of fresh) this.known.set(`${i.kind}:${i.id}`, { name: i.name, at: now.getTime() });
    }
    const model = modelOfUser(account.user);
    if (model !== "either" && now.getTime() - this.modelWritten[model] >= WRITE_EVERY_MS) {
      await noteModelSeen(this.db, model, now);
      this.modelWritten[model] = now.getTime();
    }
  }
}

import type { Database, Queryable } from "../db/database.js";
import { ConfigError } from "../config/env.js";
import { ConflictError } from "../errors.js";
import { deleteAllHolds, listHolds, type Hold } from "../db/reconcile/holdRepository.js";
import { listIdpUserIds } from "../db/idp/userReconcileReads.js";
import {
  bindPlatformIfUnbound,
  countPlatformState,
  getPlatformBinding,
  rebindPlatform,
  type PlatformStateCounts,
} from "../db/platform/bindingRepository.js";
import { writeLogEntry } from "../db/reconcile/logRepository.js";
import { markUsersDirty, releaseOldPlatformWork } from "../db/reconcile/queueRepository.js";

/**
 * The database remembers the platform it reconciles with. Its platform accounts are facts about
 * that platform only: planned against another one they would say "already matches" for accounts
 * that do not exist there. So a start against another platform stops at boot, and moving is an
 * operator's explicit `scim-connector platform forget` (docs/operations.md, "Changing the platform").
 * The platform API exposes no company identity, so a platform is known by its URL.
 */

/** How the embedded emulator (no PLATFORM_URL, development only) is recorded: its port changes every start. */
const EMBEDDED_EMULATOR = "embedded-emulator";

/** A platform as the database records it: PLATFORM_URL without a trailing slash, query or credentials; or the embedded emulator. */
export function platformIdentity(platformUrl: string | undefined): string {
  if (!platformUrl) return EMBEDDED_EMULATOR;
  const url = new URL(platformUrl);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
}

const FORGET_FIX =
  "run `scim-connector platform forget --dry-run` to see what would be forgotten, then `scim-connector platform forget --confirm` with the same environment";

/**
 * Binds an unbound database to `platform`; throws a ConfigError naming both ways out when the
 * database is bound to another platform. Runs at boot, after migrations, before anything plans.
 */
export async function assertPlatformBinding(db: Database, platform: string, now: Date): Promise<void> {
  const binding = await bindPlatformIfUnbound(db, platform, now);
  if (binding.platform === platform) return;
  const counts = await countPlatformState(db);
  throw new ConfigError([
    `PLATFORM_URL: this database reconciles with ${describePlatform(binding.platform)} (since ${binding.boundAt.toISOString()}) ` +
      `and holds ${counts.accounts} account(s) made there, but the connector now points at ${describePlatform(platform)}. ` +
      `Those accounts do not exist on the new platform, so nothing is planned until you choose: to go back, set PLATFORM_URL to ` +
      `${binding.platform === EMBEDDED_EMULATOR ? "nothing (development only)" : binding.platform}; to move, ${FORGET_FIX} ` +
      `(every IdP user is then provisioned afresh on the new platform; docs/operations.md, "Changing the platform").`,
  ]);
}

export function describePlatform(platform: string): string {
  return platform === EMBEDDED_EMULATOR ? "the embedded emulator" : platform;
}

export type PlatformForgetReport = {
  /** The platform the database was bound to (undefined: none yet). */
  from: string | undefined;
  to: string;
  forgotten: PlatformStateCounts;
  /** IdP users marked for a fresh reconcile against the new platform. */
  usersQueued: number;
};

/** What a forget would drop, read before any forget: the counts, and each action held for a decision, to be listed. */
export type PlatformForgetPreview = {
  from: string | undefined;
  to: string;
  forgotten: PlatformStateCounts;
  heldActions: Hold[];
};

export async function previewPlatformForget(db: Queryable, to: string): Promise<PlatformForgetPreview> {
  return {
    from: (await getPlatformBinding(db))?.platform,
    to,
    forgotten: await countPlatformState(db),
    heldActions: await listHolds(db, { pendingOnly: true }),
  };
}

/**
 * A forget is a move: refused when the database already reconciles with `to`, where it would only
 * drop the accounts it tracks there and the actions held for a decision (issue 34).
 */
export function assertForgetMoves(state: {
  from: string | undefined;
  to: string;
  forgotten: PlatformStateCounts;
}): void {
  if (state.from !== state.to) return;
  throw new ConflictError(
    `This database already reconciles with ${describePlatform(state.to)}: there is nothing to forget, and forgetting ` +
      `would drop the ${state.forgotten.accounts} account(s) it tracks there and its ${state.forgotten.heldActions} held action(s). ` +
      "Nothing was changed. To move to another platform, set PLATFORM_URL to it first.",
  );
}

const MARK_BATCH = 1000;

/**
 * Forgets the old platform's accounts, held actions, queued verifications and quarantines, binds
 * the database to `to` and marks every IdP user dirty, in one transaction, logged with the actor.
 * Refused (ConflictError) when the database is already bound to `to`, checked under the binding's lock.
 */
export async function forgetPlatform(
  db: Database,
  to: string,
  options: { actor: string; now: Date },
): Promise<PlatformForgetReport> {
  return db.transaction(async (tx) => {
    const from = (await getPlatformBinding(tx, { forUpdate: true }))?.platform;
    const forgotten = await countPlatformState(tx);
    assertForgetMoves({ from, to, forgotten });
    await rebindPlatform(tx, to, options.now);
    await deleteAllHolds(tx);
    await releaseOldPlatformWork(tx);
    let usersQueued = 0;
    const trigger = { kind: "admin", actor: options.actor } as const;
    for (let after: string | undefined; ;) {
      const ids = await listIdpUserIds(tx, after, MARK_BATCH);
      if (!ids.length) break;
      await markUsersDirty(tx, ids, trigger);
      usersQueued += ids.length;
      after = ids[ids.length - 1];
    }
    await writeLogEntry(tx, {
      at: options.now,
      action: "platform-change",
      outcome: "succeeded",
      trigger: { ...trigger, from: from ?? null, to, forgotten },
      actor: options.actor,
    });
    return { from, to, forgotten, usersQueued };
  });
}

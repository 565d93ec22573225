import type { Database } from "../../db/database.js";
import type { HeldAccount } from "../../db/review/accessRepository.js";
import { getOutsideChanges, type OutsideChange } from "../../db/platform/outsideChangeRepository.js";
import { getActivities, type AccountActivity } from "../../db/platform/activityRepository.js";
import { grantKey, grantsOf, type Grant } from "../../mapping/reasons.js";
import { outsideChangeWords, suspendedWords } from "../../platformRecord/accountWords.js";

/**
 * What the platform's own record adds to the access report's rows (docs/platform-record.md): the
 * account's last sign-in and suspension, and, on a grant that was given in the platform's dashboard
 * and kept (PLATFORM_OUTSIDE_CHANGES=report), who granted it and when. Read from the connector's
 * database (no platform call); the record as it stands now, so a report as of a past moment has none.
 */
export type AccountPlatformFacts = { outside?: OutsideChange; activity?: AccountActivity };

export type PlatformColumns = {
  lastSignInAt: Date | null;
  /** "suspended by … at …", or null. */
  suspended: string | null;
  /** "granted in the dashboard by … at …: …" on a grant given there, or null. */
  outside: string | null;
};

export const NO_PLATFORM_FACTS: PlatformColumns = { lastSignInAt: null, suspended: null, outside: null };

export async function platformFactsOf(
  db: Database,
  accounts: readonly HeldAccount[],
): Promise<Map<string, AccountPlatformFacts>> {
  const [outside, activity] = await Promise.all([
    getOutsideChanges(
      db,
      accounts.map((a) => a.userId),
    ),
    getActivities(
      db,
      accounts.map((a) => a.userName),
    ),
  ]);
  return new Map(
    accounts.map((a) => [
      a.userId,
      { outside: outside.get(a.userId), activity: activity.get(a.userName.toLowerCase()) },
    ]),
  );
}

/** The columns of one row: `keys`, the per-string keys of its grant. */
export function platformColumns(facts: AccountPlatformFacts | undefined, keys: readonly string[]): PlatformColumns {
  if (!facts) return NO_PLATFORM_FACTS;
  const granted = facts.outside?.access?.granted;
  const outsideKeys = new Set(
    granted
      ? grantsOf({ userName: "", givenName: "", familyName: "", department: "", ...granted }).map((g: Grant) =>
          grantKey(g),
        )
      : [],
  );
  return {
    lastSignInAt: facts.activity?.lastSignInAt ?? null,
    suspended: suspendedWords(facts.activity),
    outside: facts.outside && keys.some((k) => outsideKeys.has(k)) ? outsideChangeWords(facts.outside) : null,
  };
}

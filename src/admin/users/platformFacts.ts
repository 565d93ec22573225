import type { Queryable } from "../../db/database.js";
import { getOutsideChange, type OutsideChange } from "../../db/platform/outsideChangeRepository.js";
import { getActivity, type AccountActivity } from "../../db/platform/activityRepository.js";
import { outsideChangeWords, suspendedWords } from "../../platformRecord/accountWords.js";

/**
 * What the platform's own record says of one account (docs/platform-record.md), in an admin's
 * words, for the user page and the access review: a change made in its dashboard that is kept
 * (PLATFORM_OUTSIDE_CHANGES=report), its last sign-in and whether it is suspended.
 */
export type PlatformFacts = {
  /** "granted in the dashboard by ops-admin@… at 2026-12-06T10:02:00.000Z: admin, EU Production: export_user_data". */
  outside?: string;
  lastSignInAt: Date | null;
  lastFailedLoginAt: Date | null;
  /** "suspended by ops-admin@… at …", or null when not suspended. */
  suspended: string | null;
};

function presentPlatformFacts(change: OutsideChange | undefined, activity: AccountActivity | undefined): PlatformFacts {
  return {
    ...(change ? { outside: outsideChangeWords(change) } : {}),
    lastSignInAt: activity?.lastSignInAt ?? null,
    lastFailedLoginAt: activity?.lastFailedLoginAt ?? null,
    suspended: suspendedWords(activity),
  };
}

/** One account's facts: `userId` for the kept change, `userName` for its activity. */
export async function platformFacts(db: Queryable, userId: string, userName: string): Promise<PlatformFacts> {
  const [change, activity] = await Promise.all([getOutsideChange(db, userId), getActivity(db, userName)]);
  return presentPlatformFacts(change, activity);
}

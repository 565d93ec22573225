import type { Profile, ProfileStore, SubscriptionState } from "./profiles.js";

/**
 * Subscription-group state changes shared by `/v2/subscription/status/set`,
 * `/subscription/status/set` and `/users/track`. Identifiers with no profile change nothing.
 */

export type GroupTargets = { externalIds?: string[]; emails?: string[]; phones?: string[] };

export function setGroupState(
  profiles: ProfileStore,
  groupId: string,
  state: SubscriptionState,
  targets: GroupTargets,
): number {
  const touched = new Set<Profile>();
  for (const id of targets.externalIds ?? []) {
    const profile = profiles.byExternal(id);
    if (profile) touched.add(profile);
  }
  // An address or number linked to several profiles updates all of them.
  for (const email of targets.emails ?? []) for (const p of profiles.allWithEmail(email)) touched.add(p);
  for (const phone of targets.phones ?? []) for (const p of profiles.allWithPhone(phone)) touched.add(p);
  for (const profile of touched) {
    profile.subscriptionGroups.set(groupId, state);
    profiles.touch(profile);
  }
  return touched.size;
}

/** The value `/subscription/status/get` reports for one profile (or none). */
export function reportedState(
  profile: Profile | undefined,
  groupId: string,
): "Subscribed" | "Unsubscribed" | "Unknown" {
  const state = profile?.subscriptionGroups.get(groupId);
  if (state === "subscribed") return "Subscribed";
  if (state === "unsubscribed") return "Unsubscribed";
  return "Unknown";
}

import type { OutsideChange } from "../db/platform/outsideChangeRepository.js";
import type { AccountActivity } from "../db/platform/activityRepository.js";
import { accessWords, isEmptyAccess } from "../reconcile/outsideAccess.js";

/**
 * A managed account's facts from the platform's record in an admin's words, for the user page and
 * the access review alike (docs/platform-record.md).
 */

/** "granted in the dashboard by ops-admin@… at 2026-12-06T10:02:00.000Z: admin, EU Production: export_user_data". */
export function outsideChangeWords(change: OutsideChange): string {
  const by = `by ${change.actor} at ${change.at.toISOString()}`;
  if (change.change === "removed") return `removed in the platform's dashboard ${by}`;
  const access = change.access;
  if (!access) return `changed in the platform's dashboard ${by}`;
  return [
    isEmptyAccess(access.granted) ? "" : `granted in the dashboard ${by}: ${accessWords(access.granted).join(", ")}`,
    isEmptyAccess(access.withdrawn)
      ? ""
      : `taken away in the dashboard ${by}: ${accessWords(access.withdrawn).join(", ")}`,
  ]
    .filter(Boolean)
    .join("; ");
}

export function suspendedWords(activity: AccountActivity | undefined): string | null {
  if (!activity?.suspended) return null;
  const when = activity.suspendedAt ? ` at ${activity.suspendedAt.toISOString()}` : "";
  return `suspended by ${activity.suspendedBy ?? "someone"}${when}`;
}

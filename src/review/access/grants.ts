import type { DesiredDashboardUser } from "../../mapping/types.js";
import { assignedLabel, grantKey, grantsOf, type GrantReason } from "../../mapping/reasons.js";

export { bundleOrigin } from "../../mapping/reasons.js";

/**
 * Since when each grant has been held without a break, from the user's applied states (oldest
 * first), and the log entry that applied it then; per string (`grantsOf`), whatever the model. A
 * grant missing from the history (older than the log's retention) has no date.
 */
export function grantSince(
  history: readonly { logId: string; at: Date; after: DesiredDashboardUser | null }[],
): Map<string, { since: Date; logId: string }> {
  let held = new Map<string, { since: Date; logId: string }>();
  for (const entry of history) {
    const next = new Map<string, { since: Date; logId: string }>();
    for (const g of entry.after ? grantsOf(entry.after) : []) {
      const key = grantKey(g);
      next.set(key, held.get(key) ?? { since: entry.at, logId: entry.logId });
    }
    held = next;
  }
  return held;
}

/**
 * Since when a grant has been held as it stands: for a bundle, since its last string arrived (the
 * strings held from before the log's retention have no date, and do not count). Undefined when no
 * string has a date.
 */
export function bundleSince(
  since: ReadonlyMap<string, { since: Date; logId: string }>,
  keys: readonly string[],
): { since: Date; logId: string } | undefined {
  let latest: { since: Date; logId: string } | undefined;
  for (const key of keys) {
    const start = since.get(key);
    if (start && (!latest || start.since > latest.since)) latest = start;
  }
  return latest;
}

/** How a reason reads in a cell: "rule 'EU marketers' (mapping.yaml:12) via Marketing". */
export function describeReason(reason: GrantReason): string {
  if ("source" in reason)
    return reason.source === "department-attribute"
      ? "the IdP's department attribute"
      : "the mapping's default department";
  const file = reason.rule.file.split(/[\\/]/).pop();
  if (reason.assigned)
    return `${assignedLabel(reason.assigned)} (catalogue '${reason.assigned.id}', ${file}:${reason.rule.line})`;
  const name = reason.rule.description ? `'${reason.rule.description}'` : `#${reason.rule.index + 1}`;
  return `rule ${name} (${reason.rule.file.split(/[\\/]/).pop()}:${reason.rule.line}) via ${reason.groups.join(", ")}`;
}

import type { DesiredDashboardUser } from "../../mapping/types.js";
import { grantKey, grantsOf, type GrantReason } from "../../mapping/reasons.js";

/**
 * Since when each grant has been held without a break, from the user's applied states (oldest
 * first), and the log entry that applied it then. A grant missing from the history (older than
 * the log's retention) has no date.
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

/** How a reason reads in a cell: "rule 'EU marketers' (mapping.yaml:12) via Marketing". */
export function describeReason(reason: GrantReason): string {
  if ("source" in reason)
    return reason.source === "department-attribute"
      ? "the IdP's department attribute"
      : "the mapping's default department";
  const name = reason.rule.description ? `'${reason.rule.description}'` : `#${reason.rule.index + 1}`;
  return `rule ${name} (${reason.rule.file.split(/[\\/]/).pop()}:${reason.rule.line}) via ${reason.groups.join(", ")}`;
}

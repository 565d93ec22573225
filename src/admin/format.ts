/**
 * The words the admin pages use for stored facts: which platform request a decision made, how long
 * queued work will take at the budget's pace (what woke a reconcile is in vocabulary/reconcile.ts,
 * which the evidence pack words too). Pure; table-tested.
 */

const DAY_MS = 86_400_000;

/** A time as the admin pages write it: "2026-11-20 09:15 UTC", or "—" when there is none. */
export function formatTime(value: Date | string | null | undefined): string {
  if (!value) return "—";
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return "—";
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export type PlatformCall = { method: string; path: string; status: number | null };

/**
 * The platform request a logged decision made. The log keeps the action, the last status and the
 * calls spent, which name the request exactly (the API has one route per action); the id is the
 * account's when the connector still knows it.
 */
export function platformCallOf(
  entry: { action: string; platformStatus: number | null; callsSpent: number; userName: string | null },
  platformId: string | null,
): PlatformCall | null {
  if (entry.callsSpent === 0 && entry.platformStatus === null) return null;
  const one = `/scim/v2/Users/${platformId ?? "{id}"}`;
  const status = entry.platformStatus;
  switch (entry.action) {
    case "create":
      return { method: "POST", path: "/scim/v2/Users", status };
    case "update":
    case "drift":
      return { method: "PUT", path: one, status };
    case "deprovision":
      return { method: "DELETE", path: one, status };
    case "verify":
      return { method: "GET", path: one, status };
    case "adopt":
      return { method: "GET", path: `/scim/v2/Users?filter=userName eq "${entry.userName ?? ""}"`, status };
    default:
      return null;
  }
}

/** The queue's ETA as the overview says it; undefined when nothing waits. */
export function etaText(now: Date, eta: Date | null, formatTime: (d: Date) => string): string | undefined {
  if (!eta) return undefined;
  if (eta.getTime() <= now.getTime()) return "all within today's budget";
  const days = Math.max(1, Math.ceil((eta.getTime() - now.getTime()) / DAY_MS));
  return `about ${days} day${days === 1 ? "" : "s"} at the current budget (finishing after ${formatTime(eta)})`;
}

/**
 * How long a batch of platform calls takes at the budget's pace: `perDay` calls a day (the limit
 * less the deprovisioning reserve), after the `queued` users already waiting.
 */
export function durationLabel(input: {
  calls: number;
  queued: number;
  remainingToday: number;
  perDay: number;
}): string {
  const { calls, queued, remainingToday, perDay } = input;
  if (calls <= 0) return "no platform calls needed";
  const total = calls + Math.max(0, queued);
  const behind = queued > 0 ? `, behind ${queued.toLocaleString("en")} users already queued` : "";
  if (total <= remainingToday)
    return `fits in today's remaining budget (${remainingToday.toLocaleString("en")} calls left${behind})`;
  if (perDay <= 0) return "cannot be estimated: the daily budget is all reserve";
  const days = Math.max(0.1, Math.round((total / perDay) * 10) / 10);
  return `about ${days} day${days === 1 ? "" : "s"} at the current pace (${perDay.toLocaleString("en")} calls a day${behind})`;
}

/**
 * A datetime-local value ("2026-11-20T09:15", read as UTC) or an ISO time; undefined when empty.
 * Throws a RangeError naming the field when it is not a time.
 */
export function parseUtcTime(value: string | undefined, field: string): Date | undefined {
  if (!value) return undefined;
  const hasZone = /T.*(Z|[+-]\d{2}:?\d{2})$/i.test(value);
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const date = new Date(hasZone ? value : dateOnly ? `${value}T00:00Z` : `${value}Z`);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(date.getTime()))
    throw new RangeError(`${field}: not a date and time (use YYYY-MM-DDTHH:MM, UTC)`);
  return date;
}

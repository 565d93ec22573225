/**
 * The words the admin pages use for stored facts: what woke a reconcile, which platform request
 * a decision made, how long queued work will take at the budget's pace. Pure; table-tested.
 */

const DAY_MS = 86_400_000;

/** A time as the admin pages write it: "2026-11-20 09:15 UTC", or "—" when there is none. */
export function formatTime(value: Date | string | null | undefined): string {
  if (!value) return "—";
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return "—";
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

type Json = Record<string, unknown>;

const asObject = (value: unknown): Json =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {};
const textOf = (t: Json, key: string) => (typeof t[key] === "string" && t[key] !== "" ? (t[key] as string) : undefined);

/** An IdP change recorded with its facts (`change` in the trigger), in an admin's words. */
function idpChangeWords(change: Json): string | undefined {
  const group = textOf(change, "groupName") ?? "(unnamed)";
  switch (change.what) {
    case "user-created":
      return "created by the IdP";
    case "user-deactivated":
      return "deactivated in the IdP";
    case "user-reactivated":
      return "reactivated in the IdP";
    case "user-updated":
      return "profile changed in the IdP";
    case "user-deleted":
      return "deleted in the IdP";
    case "added-to-group":
      return `added to group ${group}`;
    case "removed-from-group":
      return `removed from group ${group}`;
    case "group-deleted":
      return `group ${group} deleted in the IdP`;
    case "group-renamed": {
      const previous = textOf(change, "previousName");
      return previous && previous !== group
        ? `group ${previous} renamed to ${group}`
        : `group ${group} changed in the IdP`;
    }
    default:
      return undefined;
  }
}

/** Rows recorded before triggers carried their facts: words from the request alone. */
function idpRequestWords(method: string | undefined, resource: string | undefined): string {
  const type = resource?.split("/")[0];
  if (type === "Users") {
    if (method === "POST") return "created by the IdP";
    if (method === "DELETE") return "deleted in the IdP";
    return "changed in the IdP";
  }
  if (type === "Groups") {
    if (method === "DELETE") return "a group of theirs was deleted in the IdP";
    return "a group of theirs changed in the IdP";
  }
  return "changed in the IdP";
}

function mappingWords(rules: unknown): string {
  const named = (Array.isArray(rules) ? rules : []).map(asObject).filter((r) => typeof r.line === "number");
  if (!named.length) return "mapping change";
  const one = (r: Json) =>
    `${r.removed ? "removed rule" : "rule"} ${textOf(r, "name") ?? "(unnamed)"}, line ${r.line as number}`;
  return named.length === 1 ? `mapping change: ${one(named[0]!)}` : `mapping change: ${named.map(one).join("; ")}`;
}

/**
 * What woke a reconcile, in the words an admin reads: "added to group Marketing", "deactivated in
 * the IdP", "mapping change: rule Analysts export data, line 34", "reconcile now by Ann". The
 * names are those recorded with the trigger at the time; ids are on the entry's page (triggerFacts).
 */
export function triggerLabel(trigger: unknown): string {
  const t = asObject(trigger);
  switch (t.kind) {
    case "idp":
      return idpChangeWords(asObject(t.change)) ?? idpRequestWords(textOf(t, "method"), textOf(t, "resource"));
    case "mapping":
      return mappingWords(t.rules);
    case "resync":
      return "resync";
    case "admin": {
      const actor = textOf(t, "actor") ?? "an admin";
      if (t.via === "approval") return `approved by ${actor}`;
      if (t.via === "campaign") return `revoked in a campaign by ${actor}`;
      if (textOf(t, "hold")) return `held ${textOf(t, "hold")} decided by ${actor}`;
      if (textOf(t, "runId")) return `resync started by ${actor}`;
      return `reconcile now by ${actor}`;
    }
    case "campaign":
      return "access campaign";
    default:
      return typeof t.kind === "string" ? t.kind : "—";
  }
}

/** One fact of a trigger for the entry's page: a label, a value, and the admin page it links to. */
export type TriggerFact = { label: string; value: string; page?: "mapping" | "runs" };

/** The ids behind a trigger's words, for the entry's own page. */
export function triggerFacts(trigger: unknown): TriggerFact[] {
  const t = asObject(trigger);
  const facts: TriggerFact[] = [];
  const change = asObject(t.change);
  const groupId = textOf(change, "groupId");
  if (groupId) facts.push({ label: "IdP group", value: `${textOf(change, "groupName") ?? ""} (${groupId})`.trim() });
  if (textOf(change, "previousName"))
    facts.push({ label: "Previous group name", value: textOf(change, "previousName")! });
  const request = [textOf(t, "method"), textOf(t, "resource") && `/scim/v2/${textOf(t, "resource")}`]
    .filter(Boolean)
    .join(" ");
  if (t.kind === "idp" && request) facts.push({ label: "IdP request", value: request });
  if (textOf(t, "requestId")) facts.push({ label: "Request id", value: textOf(t, "requestId")! });
  if (textOf(t, "mappingHash")) facts.push({ label: "Mapping version", value: textOf(t, "mappingHash")!.slice(0, 12) });
  for (const rule of (Array.isArray(t.rules) ? t.rules : []).map(asObject)) {
    facts.push({
      label: rule.removed ? "Removed rule" : "Rule",
      value: `${textOf(rule, "name") ?? "(unnamed)"} (line ${String(rule.line)})`,
      ...(rule.removed ? {} : { page: "mapping" as const }),
    });
  }
  if (textOf(t, "runId")) facts.push({ label: "Resync run", value: textOf(t, "runId")!, page: "runs" });
  return facts;
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

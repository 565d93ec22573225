/**
 * The reconciler's words, which the rest of the connector writes and reads: what woke a reconcile
 * (`DirtyTrigger`, stored with each mark and each log entry) and what the log says was done
 * (`LogAction`, `LogOutcome`), and a trigger in an admin's words (`triggerLabel`, `triggerFacts`, for the
 * log's pages and the evidence pack). They live here, below src/db, which stores them as they are given,
 * and below src/scim, which writes them.
 */

/**
 * What caused a user to be marked dirty; kept on the queue row and copied into the reconciliation
 * log. The facts an admin reads later (group names, rules) are recorded as they were at the time.
 * Rows written before `change`/`rules`/`via` existed lack them; the admin UI words those from the rest.
 */
export type DirtyTrigger =
  | { kind: "idp"; requestId?: string; method?: string; resource?: string; change?: IdpChange }
  | { kind: "mapping"; mappingHash?: string; rules?: MappingRuleRef[]; entries?: CatalogueEntryRef[] }
  | { kind: "resync"; runId: string }
  | { kind: "admin"; actor: string; via?: "approval" | "campaign"; campaignId?: string }
  | PlatformTrigger;

export const TRIGGER_KINDS = [
  "idp",
  "mapping",
  "resync",
  "admin",
  "platform",
] as const satisfies readonly DirtyTrigger["kind"][];

/**
 * The platform's record says someone other than the connector changed the account there
 * (src/platformRecord/managedChanges.ts): `event` is the connector's word for it
 * ("permissions-changed", "account-updated", "account-removed"), `name` the report's ("Updated
 * Account Permission"), `actor` who the report says did it, `at` when (ISO, UTC).
 */
export type PlatformTrigger = { kind: "platform"; event: string; name?: string; actor: string; at: string };

/** What the IdP request did to this user. */
export type IdpChange =
  | { what: "user-created" | "user-deactivated" | "user-reactivated" | "user-updated" | "user-deleted" }
  | { what: "added-to-group" | "removed-from-group" | "group-deleted"; groupId: string; groupName: string }
  | { what: "group-renamed"; groupId: string; groupName: string; previousName: string }
  | AssignmentsChanged;

/**
 * A user write that assigned or removed roles[] / entitlements[] values (and changed no activation):
 * each named as the catalogue said then, and `assignedIn` the IdP as the catalogue named it. At most
 * ASSIGNMENT_REFS of each are listed; `unlisted` counts the others.
 */
export type AssignmentsChanged = {
  what: "assignments-changed";
  assigned: AssignmentRef[];
  removed: AssignmentRef[];
  unlisted?: number;
  assignedIn: string;
};

/** One value: `name`, the catalogue entry's display name when it had one (else the value is the name). */
export type AssignmentRef = { attribute: "roles" | "entitlements"; value: string; name?: string };

export const ASSIGNMENT_REFS = 10;

/** A mapping rule that changed, as the file said at the time (`name`: its description, or what it matches). */
type MappingRuleRef = { line: number; name: string; removed?: true };

/** A catalogue entry whose grants changed, as the file said at the time (`name`: its display name). */
type CatalogueEntryRef = { id: string; line: number; name: string; removed?: true };

/** What a log entry records was done (or decided). */
export const LOG_ACTIONS = [
  "create",
  "update",
  "deprovision",
  "adopt",
  "verify",
  "drift",
  "hold",
  "needs-admin",
  "approve",
  "reject",
  "reconcile-now",
  "resync",
  "mapping",
  "platform-change",
  "campaign",
  "revoke",
  "deny-ended",
] as const;
export type LogAction = (typeof LOG_ACTIONS)[number];

/** How it ended. */
export const LOG_OUTCOMES = [
  "succeeded",
  "failed",
  "retrying",
  "deferred-for-budget",
  "held",
  "rejected",
  "reported",
  "enforced",
] as const;
export type LogOutcome = (typeof LOG_OUTCOMES)[number];

/** The outcomes of an entry that did not happen as asked: their words are an error. */
export type FailedOutcome = "failed" | "retrying";

/**
 * An entry's words, in the field its outcome calls for: `error`, why an entry that failed (or will
 * be retried) did not happen; `note`, what an admin should know of any other entry (why access was
 * removed, why an action is held, a campaign's decision).
 */
export type LogWords =
  | { outcome: FailedOutcome; error?: string | null; note?: never }
  | { outcome: Exclude<LogOutcome, FailedOutcome>; note?: string | null; error?: never };

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
    case "assignments-changed":
      return assignmentChangeWords(change);
    default:
      return undefined;
  }
}

const assignmentRefs = (refs: unknown) =>
  (Array.isArray(refs) ? refs : []).map(asObject).filter((r) => textOf(r, "value") !== undefined);
const assignmentNoun = (ref: Json) => (ref.attribute === "roles" ? "role" : "entitlement");
const assignmentName = (ref: Json) => `${assignmentNoun(ref)} ${textOf(ref, "name") ?? textOf(ref, "value")!}`;

/** "role Auditor and entitlement EU analyst assigned in Okta; entitlement Marketer – Fashion Brands removed in Okta". */
function assignmentChangeWords(change: Json): string {
  const where = textOf(change, "assignedIn") ?? "the IdP";
  const list = (names: string[]) =>
    names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]!}` : names[0]!;
  const clauses = (
    [
      ["assigned", assignmentRefs(change.assigned)],
      ["removed", assignmentRefs(change.removed)],
    ] as const
  )
    .filter(([, refs]) => refs.length)
    .map(([verb, refs]) => `${list(refs.map(assignmentName))} ${verb} in ${where}`);
  const unlisted = typeof change.unlisted === "number" && change.unlisted > 0 ? change.unlisted : 0;
  if (!clauses.length) return "roles or entitlements changed in the IdP";
  return clauses.join("; ") + (unlisted ? `; and ${unlisted} more` : "");
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

const named = (refs: unknown) =>
  (Array.isArray(refs) ? refs : []).map(asObject).filter((r) => typeof r.line === "number");

function mappingWords(rules: unknown, entries: unknown): string {
  const rule = (r: Json) =>
    `${r.removed ? "removed rule" : "rule"} ${textOf(r, "name") ?? "(unnamed)"}, line ${r.line as number}`;
  const entry = (e: Json) =>
    `${e.removed ? "removed catalogue entry" : "catalogue entry"} ${textOf(e, "name") ?? textOf(e, "id") ?? "(unnamed)"}, line ${e.line as number}`;
  const words = [...named(rules).map(rule), ...named(entries).map(entry)];
  return words.length ? `mapping change: ${words.join("; ")}` : "mapping change";
}

/**
 * What woke a reconcile, in the words an admin reads: "added to group Marketing", "deactivated in
 * the IdP", "mapping change: rule Analysts export data, line 34" (or "catalogue entry EU analyst,
 * line 61"), "reconcile now by Ann". The
 * names are those recorded with the trigger at the time; ids are on the entry's page (triggerFacts).
 */
export function triggerLabel(trigger: unknown): string {
  const t = asObject(trigger);
  switch (t.kind) {
    case "idp":
      return idpChangeWords(asObject(t.change)) ?? idpRequestWords(textOf(t, "method"), textOf(t, "resource"));
    case "mapping":
      return mappingWords(t.rules, t.entries);
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
    case "platform":
      return platformChangeWords(t);
    case "campaign":
      return "access campaign";
    default:
      return typeof t.kind === "string" ? t.kind : "—";
  }
}

/** "changed in the platform's dashboard by ops-admin@example.com at 10:02 UTC" (the day is in triggerFacts). */
export function platformChangeWords(t: Json): string {
  const verb = t.event === "account-removed" ? "removed" : "changed";
  const at = textOf(t, "at");
  const time = at && !Number.isNaN(Date.parse(at)) ? ` at ${new Date(at).toISOString().slice(11, 16)} UTC` : "";
  return `${verb} in the platform's dashboard by ${textOf(t, "actor") ?? "someone"}${time}`;
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
  for (const [verb, refs] of [
    ["Assigned", assignmentRefs(change.assigned)],
    ["Removed", assignmentRefs(change.removed)],
  ] as const) {
    for (const ref of refs) {
      const value = textOf(ref, "value")!;
      const name = textOf(ref, "name");
      facts.push({ label: `${verb} ${assignmentNoun(ref)}`, value: name ? `${name} (${value})` : value });
    }
  }
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
  for (const entry of named(t.entries)) {
    facts.push({
      label: entry.removed ? "Removed catalogue entry" : "Catalogue entry",
      value: `${textOf(entry, "name") ?? "(unnamed)"} (${textOf(entry, "id") ?? "?"}, line ${String(entry.line)})`,
      ...(entry.removed ? {} : { page: "mapping" as const }),
    });
  }
  if (textOf(t, "runId")) facts.push({ label: "Resync run", value: textOf(t, "runId")!, page: "runs" });
  if (t.kind === "platform") {
    if (textOf(t, "name")) facts.push({ label: "Platform event", value: textOf(t, "name")! });
    if (textOf(t, "actor")) facts.push({ label: "Changed by", value: textOf(t, "actor")! });
    if (textOf(t, "at")) facts.push({ label: "Changed at", value: textOf(t, "at")! });
  }
  return facts;
}

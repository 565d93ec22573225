/**
 * The reconciler's words, which the rest of the connector writes and reads: what woke a reconcile
 * (`DirtyTrigger`, stored with each mark and each log entry) and what the log says was done
 * (`LogAction`, `LogOutcome`). They live here, above src/db, which stores them as they are given.
 */

/**
 * What caused a user to be marked dirty; kept on the queue row and copied into the reconciliation
 * log. The facts an admin reads later (group names, rules) are recorded as they were at the time.
 * Rows written before `change`/`rules`/`via` existed lack them; the admin UI words those from the rest.
 */
export type DirtyTrigger =
  | { kind: "idp"; requestId?: string; method?: string; resource?: string; change?: IdpChange }
  | { kind: "mapping"; mappingHash?: string; rules?: MappingRuleRef[] }
  | { kind: "resync"; runId: string }
  | { kind: "admin"; actor: string; via?: "approval" | "campaign"; campaignId?: string };

export const TRIGGER_KINDS = ["idp", "mapping", "resync", "admin"] as const satisfies readonly DirtyTrigger["kind"][];

/** What the IdP request did to this user. */
export type IdpChange =
  | { what: "user-created" | "user-deactivated" | "user-reactivated" | "user-updated" | "user-deleted" }
  | { what: "added-to-group" | "removed-from-group" | "group-deleted"; groupId: string; groupName: string }
  | { what: "group-renamed"; groupId: string; groupName: string; previousName: string };

/** A mapping rule that changed, as the file said at the time (`name`: its description, or what it matches). */
type MappingRuleRef = { line: number; name: string; removed?: true };

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

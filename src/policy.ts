/**
 * Every authorization rule, in one place: what each admin role may do, on the admin UI's pages and
 * buttons (src/http/admin/policy.ts enforces it on routes) and in the use cases the UI, the JSON
 * API and the CLI share (src/review/campaigns: whose items a reviewer may see or decide). Pure, and
 * below every folder that asks. A viewer reads and reviews their own items; an admin also approves
 * held changes, reconciles on demand, starts resyncs, resumes quarantined families, sends test
 * notifications, starts and closes access campaigns, lifts their denies, sees and decides any
 * reviewer's items, downloads evidence packs, approves OAuth clients, imports the platform's
 * Security Event report and previews mapping drafts (mappings are put in force by editing
 * MAPPING_FILE, which only operators do).
 */

export type AdminRole = "viewer" | "admin";

export type AdminAction =
  | "read"
  | "review"
  | "reviewAnyone"
  | "approve"
  | "reconcile"
  | "resync"
  | "resume"
  | "notifyTest"
  | "campaign"
  | "evidence"
  | "oauthApprove"
  | "platformEvents"
  /** Preview a mapping draft: it runs the draft's rules over every user, as putting it in force would. */
  | "mapping";

const GRANTS: Record<AdminRole, ReadonlySet<AdminAction>> = {
  viewer: new Set(["read", "review"]),
  admin: new Set([
    "read",
    "review",
    "reviewAnyone",
    "approve",
    "reconcile",
    "resync",
    "resume",
    "notifyTest",
    "campaign",
    "evidence",
    "oauthApprove",
    "platformEvents",
    "mapping",
  ]),
};

/** Whether `role` may do `action`; a role this file does not know may do nothing. */
export function can(role: string | undefined, action: AdminAction): boolean {
  return role !== undefined && Object.hasOwn(GRANTS, role) && GRANTS[role as AdminRole].has(action);
}

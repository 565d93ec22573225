import { listHolds, type Hold } from "../db/reconcile/holdRepository.js";
import { getAccounts } from "../db/platform/accountRepository.js";
import { BadRequestError } from "../errors.js";
import { decide, decideAll } from "../reconcile/holdDecisions.js";
import type { AdminActor } from "./adminActor.js";
import type { AdminDataDeps } from "./deps.js";
import { isUuid } from "../ids.js";

/**
 * A held action as GET /admin/api/approvals answers it (`res.json` sends the dates as ISO
 * strings); the Approvals page lists it through `heldItem`.
 */
export function presentHold(h: Hold) {
  return {
    userId: h.userId,
    kind: h.kind,
    userName: h.userName,
    detail: h.detail,
    createdAt: h.createdAt,
    decision: h.decision,
    decidedBy: h.decidedBy,
    decidedAt: h.decidedAt,
  };
}

export type HoldView = ReturnType<typeof presentHold>;

/** The Approvals page's row: a presented hold with the id its forms post, a name, and why it waits in words. */
export type HeldItem = {
  /** The id the approve/reject actions take (the held user's id). */
  id: string;
  kind: "deprovision" | "email_change";
  userName: string;
  /** One line: why it was held, e.g. "mass deprovision: 120 removals in 10 min" or "a@x → b@x". */
  summary: string;
  heldAt: Date;
};

export type ApprovalsData = { held: HeldItem[] };

/**
 * Why an action waits, in one line. For an email change the old name is the platform account's
 * (`accountUserName`) when known: the account keeps it until the change is carried out.
 */
export function holdSummary(hold: Pick<Hold, "kind" | "detail">, accountUserName?: string): string {
  if (hold.kind === "email_change") {
    const from = accountUserName ?? (typeof hold.detail.from === "string" ? hold.detail.from : "?");
    const to = typeof hold.detail.to === "string" ? hold.detail.to : "?";
    return `userName changed ${from} → ${to}: approving deletes the platform account and creates it under the new name`;
  }
  // A campaign's delete of an account made by hand (src/reconcile/unmanagedRemoval.ts) says why it waits.
  if (typeof hold.detail.why === "string") return `${hold.detail.why}: approving deletes the dashboard account`;
  return "held by the mass-deprovision breaker: approving removes the dashboard account";
}

/** `accountUserName`: the platform account's name, the old name of an email change (`holdSummary`). */
export function heldItem(h: HoldView, accountUserName?: string): HeldItem {
  return {
    id: h.userId,
    kind: h.kind,
    userName: h.userName ?? h.userId,
    summary: holdSummary(h, accountUserName),
    heldAt: h.createdAt,
  };
}

export async function approvalsData(deps: AdminDataDeps): Promise<ApprovalsData> {
  const holds = await listHolds(deps.db, { pendingOnly: true });
  const accounts = await getAccounts(
    deps.db,
    holds.filter((h) => h.kind === "email_change").map((h) => h.userId),
  );
  return { held: holds.map(presentHold).map((h) => heldItem(h, accounts.get(h.userId)?.userName)) };
}

/** The held actions as GET /admin/api/approvals lists them: undecided only, or all. */
export async function listHeld(deps: Pick<AdminDataDeps, "db">, pendingOnly: boolean): Promise<HoldView[]> {
  return (await listHolds(deps.db, { pendingOnly })).map(presentHold);
}

/**
 * One user's held action decided; undefined when nothing waits for that user. reconcile/approvals.ts
 * writes the decision to the log with the actor and, on approval, queues the user so the next
 * reconcile carries the action out.
 */
export async function decideHold(
  deps: Pick<AdminDataDeps, "db" | "clock">,
  userId: string,
  decision: "approved" | "rejected",
  actor: string,
): Promise<HoldView | undefined> {
  const hold = await decide(deps.db, userId, decision, actor, deps.clock.now());
  return hold ? presentHold(hold) : undefined;
}

/** Every undecided held action decided at once; how many were. */
export async function decideAllHolds(
  deps: Pick<AdminDataDeps, "db" | "clock">,
  decision: "approved" | "rejected",
  actor: string,
): Promise<number> {
  return decideAll(deps.db, decision, actor, deps.clock.now());
}

/** Approve or reject held actions from the Approvals page, answered in words. */
export async function decideHolds(
  deps: AdminDataDeps,
  ids: string[] | "all",
  decision: "approved" | "rejected",
  actor: AdminActor,
): Promise<string> {
  const verb = decision === "approved" ? "Approved" : "Rejected";
  if (ids === "all") {
    const n = await decideAllHolds(deps, decision, actor.name);
    return n ? `${verb} ${plural(n)}.` : "Nothing was waiting for approval.";
  }
  const valid = [...new Set(ids.filter(isUuid))];
  if (!valid.length) throw new BadRequestError("Select at least one held action first.");
  let decided = 0;
  for (const id of valid) if (await decideHold(deps, id, decision, actor.name)) decided++;
  const skipped = valid.length - decided;
  return `${verb} ${plural(decided)}.${skipped ? ` ${skipped} had already been decided.` : ""}`;
}

const plural = (n: number) => `${n} held action${n === 1 ? "" : "s"}`;

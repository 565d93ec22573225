import { listHolds, type Hold } from "../db/holdRepository.js";
import { getAccounts } from "../db/platformAccountRepository.js";
import { BadRequestError } from "../errors.js";
import { decide, decideAll } from "../reconcile/approvals.js";
import type { AdminActor } from "../http/admin/actor.js";
import type { ApprovalsData, HeldItem } from "../http/admin/ui/pages/approvals.js";
import type { AdminDataDeps } from "./deps.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
  return "held by the mass-deprovision breaker: approving removes the dashboard account";
}

export async function approvalsData(deps: AdminDataDeps): Promise<ApprovalsData> {
  const holds = await listHolds(deps.db, { pendingOnly: true });
  const accounts = await getAccounts(deps.db, holds.filter((h) => h.kind === "email_change").map((h) => h.userId));
  return {
    held: holds.map(
      (h): HeldItem => ({ id: h.userId, kind: h.kind, userName: h.userName ?? h.userId, summary: holdSummary(h, accounts.get(h.userId)?.userName), heldAt: h.createdAt }),
    ),
  };
}

/**
 * Approve or reject held actions. reconcile/approvals.ts writes each decision to the log with
 * the actor and, on approval, queues the user so the next reconcile carries the action out.
 */
export async function decideHolds(deps: AdminDataDeps, ids: string[] | "all", decision: "approved" | "rejected", actor: AdminActor): Promise<string> {
  const verb = decision === "approved" ? "Approved" : "Rejected";
  const now = deps.clock.now();
  if (ids === "all") {
    const n = await decideAll(deps.db, decision, actor.name, now);
    return n ? `${verb} ${plural(n)}.` : "Nothing was waiting for approval.";
  }
  const valid = [...new Set(ids.filter((id) => UUID.test(id)))];
  if (!valid.length) throw new BadRequestError("Select at least one held action first.");
  let decided = 0;
  for (const id of valid) if (await decide(deps.db, id, decision, actor.name, now)) decided++;
  const skipped = valid.length - decided;
  return `${verb} ${plural(decided)}.${skipped ? ` ${skipped} had already been decided.` : ""}`;
}

const plural = (n: number) => `${n} held action${n === 1 ? "" : "s"}`;

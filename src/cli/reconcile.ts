import { parseArgs } from "node:util";
import type { Database } from "../db/database.js";
import { systemClock, type Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import { listHolds, type Hold } from "../db/reconcile/holdRepository.js";
import { findUserIdByUserName } from "../db/idp/userReconcileReads.js";
import { getQueueEntry } from "../db/reconcile/queueReads.js";
import type { PlatformAccount } from "../db/platform/accountRepository.js";
import type { DesiredDashboardUser } from "../mapping/types.js";
import { decide, decideAll } from "../reconcile/holdDecisions.js";
import { MappedDesiredState } from "../reconcile/desiredSource.js";
import { describeChange, diffDashboardUsers, type Change } from "../reconcile/diff.js";
import { MappingStore } from "../mapping/store.js";
import { DesiredAccess } from "../mapping/desiredAccess.js";
import type { Plan, Policies } from "../reconcile/planner.js";
import { reconcilePoliciesFromEnv } from "../reconcile/index.js";
import { describeQueueEntry } from "../reconcile/queueStatus.js";
import { planUser } from "../reconcile/reconciler.js";
import { cliActor } from "./commandActor.js";

/**
 * `scim-connector plan <userName>` and `scim-connector approvals list|approve|reject`. Both read
 * and write the database only: `plan` never calls the platform (it spends no budget), and an
 * approval marks the user dirty for the running service's workers to carry out.
 */

export type PlanReport = {
  userName: string;
  userId: string;
  desired: DesiredDashboardUser | null;
  account: PlatformAccount | undefined;
  changes: Change[];
  plan: Plan;
  hold: Hold | undefined;
  action: string;
  /** Where the user stands in the reconcile queue (waiting to settle, deferred, parked), or undefined when not queued. */
  queue: string | undefined;
};

/** What the reconciler would do for this user right now (its own `planUser`), with the queue row and the difference in words. */
export async function buildPlanReport(
  db: Database,
  access: DesiredAccess,
  policies: Policies,
  userName: string,
  clock: Clock = systemClock,
): Promise<PlanReport | undefined> {
  const userId = await findUserIdByUserName(db, userName);
  if (!userId) return undefined;
  const [current, entry] = await Promise.all([
    planUser({ db, source: new MappedDesiredState(db, access), policies, clock }, userId),
    getQueueEntry(db, userId),
  ]);
  const { plan, account, desired, hold } = current;
  return {
    userName: current.userName ?? account?.userName ?? userName,
    userId,
    desired,
    account,
    changes: diffDashboardUsers(account?.lastApplied ?? null, desired),
    plan,
    hold,
    action: describeAction(plan, hold),
    queue: entry && describeQueueEntry(entry, systemClock.now()),
  };
}

function describeAction(plan: Plan, hold: Hold | undefined): string {
  const waiting =
    hold && hold.decision === null
      ? ` (held for an admin since ${hold.createdAt.toISOString()}: scim-connector approvals approve ${hold.userId})`
      : "";
  const approved =
    hold?.decision === "approved"
      ? " (approved by an admin)"
      : hold?.decision === "rejected"
        ? " (rejected by an admin: nothing will be done)"
        : "";
  switch (plan.action) {
    case "none":
      return `none: ${plan.reason} (0 calls)`;
    case "forget":
      return `forget the local record: ${plan.reason} (0 calls)`;
    case "rebase":
      return "re-base to granular permissions: the account already holds what the mapping grants, in legacy terms (0 calls)";
    case "create":
      return "create: 1 POST (its answer gives the platform id)";
    case "resolve-create":
      return `resolve an unanswered create: 1 lookup by userName, then ${plan.desired ? "adopt it (a PUT only if it differs) or create it" : "delete what it finds"}`;
    case "update":
      return `update: 1 PUT of the complete resource${plan.reduction ? " (a reduction: at once, from the reserve, queued ahead of creates)" : ""}`;
    case "strip":
      return `strip: 1 PUT with no permissions at once (a reduction, from the reserve); the account is kept${plan.deleteAfter ? ` and deleted after ${plan.deleteAfter.toISOString()} unless access is granted again` : " (an adopted account: never deleted)"}`;
    case "await-delete":
      return `stripped: the account has no permissions and is kept; it will be deleted after ${plan.deleteAfter.toISOString()} (1 DELETE) unless access is granted again${waiting}${approved}`;
    case "deprovision":
      return `deprovision: 1 DELETE, may use the reserve; subject to the mass-deprovision breaker${waiting}${approved}`;
    case "recreate":
      return `recreate: the userName changed; 1 DELETE of the old account, then 1 POST of the new one, in the same pass${waiting}`;
    case "email-change":
      return `needs an admin: the userName changed and the platform cannot rename; approving deletes and re-creates the account (2 calls)${plan.interim ? "; meanwhile 1 PUT applies the rest of the change under the current userName" : ""}${waiting}${approved}`;
  }
}

/** ", stripped …" for an account kept with no permissions, and when it will be deleted. */
function strippedText(account: PlatformAccount): string {
  if (!account.strippedAt) return "";
  const until = account.deleteAfter ? `deleted after ${account.deleteAfter.toISOString()}` : "kept (adopted)";
  return `, stripped ${account.strippedAt.toISOString()}: no permissions, ${until}`;
}

export function formatPlanReport(report: PlanReport): string {
  const lines = [
    `User ${report.userName} (IdP id ${report.userId})`,
    "",
    "Desired dashboard user:",
    ...formatUser(report.desired, "no account (not active, or in no mapped group)"),
  ];
  const account = report.account;
  const where = account
    ? ` (platform id ${account.platformId ?? "none yet"}, ${account.state}${account.appliedAt ? `, applied ${account.appliedAt.toISOString()}` : ""}${strippedText(account)})`
    : "";
  lines.push(
    "",
    `Last applied${where}:`,
    ...formatUser(
      account?.lastApplied ?? null,
      account?.state === "creating"
        ? "a create was sent; its answer was not recorded"
        : "nothing (no account created by the connector)",
    ),
  );
  lines.push(
    "",
    "Difference:",
    ...(report.changes.length ? report.changes.map((c) => `  ${describeChange(c)}`) : ["  none"]),
  );
  lines.push("", `Action: ${report.action}`);
  if (report.queue) lines.push(`Queue: ${report.queue}`);
  lines.push("", "Nothing was sent to the platform; no budget was spent.");
  return lines.join("\n");
}

function formatUser(user: DesiredDashboardUser | null, absent: string): string[] {
  if (!user) return [`  ${absent}`];
  const lines = [
    `  userName: ${user.userName}`,
    `  name: ${user.givenName} ${user.familyName}`,
    `  department: ${user.department}`,
    `  companyPermissions: ${user.companyPermissions.join(", ") || "-"}`,
  ];
  for (const ws of user.workspaces) {
    lines.push(
      `  workspace ${ws.appGroupName}: ${ws.appGroupPermissions.join(", ") || "-"}${ws.appGroupPermissionSets.length ? `; permission sets: ${ws.appGroupPermissionSets.join(", ")}` : ""}`,
    );
    for (const team of ws.team) lines.push(`    team ${team.teamName}: ${team.teamPermissions.join(", ") || "-"}`);
  }
  return lines;
}

export async function planCommand(env: Env, db: Database, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: { json: { type: "boolean" } }, allowPositionals: true });
  const userName = positionals[0];
  if (!userName) throw new Error("plan needs a userName, for example: scim-connector plan ann@example.com");
  const desired = new DesiredAccess(await MappingStore.load(env.MAPPING_FILE));
  const report = await buildPlanReport(db, desired, reconcilePoliciesFromEnv(env), userName);
  if (!report) {
    process.stderr.write(`No IdP user or platform account with the userName "${userName}".\n`);
    process.exitCode = 1;
    return;
  }
  if (values.json) {
    const { account, plan, hold, ...rest } = report;
    console.log(
      JSON.stringify(
        {
          ...rest,
          action: plan.action,
          description: report.action,
          lastApplied: account?.lastApplied ?? null,
          platformId: account?.platformId ?? null,
          hold: hold ?? null,
        },
        null,
        2,
      ),
    );
  } else {
    console.log(formatPlanReport(report));
  }
}

export async function approvalsCommand(db: Database, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { all: { type: "boolean" }, as: { type: "string" } },
    allowPositionals: true,
  });
  const actor = cliActor(values.as);
  if (sub === "list") {
    const holds = await listHolds(db, { pendingOnly: !values.all });
    if (!holds.length) console.log(values.all ? "No holds." : "Nothing is waiting for approval.");
    for (const hold of holds) console.log(formatHold(hold));
    return;
  }
  if (sub !== "approve" && sub !== "reject")
    throw new Error(
      "approvals needs a subcommand: list [--all], approve <userId|userName|all>, reject <userId|userName|all>",
    );
  const target = positionals[0];
  if (!target) throw new Error(`approvals ${sub} needs a user id, a userName, or "all"`);
  const decision = sub === "approve" ? "approved" : "rejected";
  if (target === "all") {
    const count = await decideAll(db, decision, actor, systemClock.now());
    console.log(
      `${decision === "approved" ? "Approved" : "Rejected"} ${count} held action(s).${decision === "approved" && count ? " The service's workers carry them out." : ""}`,
    );
    return;
  }
  const userId = /^[0-9a-f-]{36}$/i.test(target) ? target : await findUserIdByUserName(db, target);
  const hold = userId ? await decide(db, userId, decision, actor, systemClock.now()) : undefined;
  if (!hold) {
    process.stderr.write(`No undecided hold for "${target}". See: scim-connector approvals list\n`);
    process.exitCode = 1;
    return;
  }
  console.log(`${decision === "approved" ? "Approved" : "Rejected"}: ${formatHold({ ...hold, decision })}`);
}

/** One held action on a line: user id, userName, what is held, since when, and any decision. */
export function formatHold(hold: Hold): string {
  const what =
    hold.kind === "deprovision"
      ? "deprovision (mass-deprovision breaker)"
      : `email change ${String(hold.detail.from ?? "?")} → ${String(hold.detail.to ?? hold.userName ?? "?")}`;
  const decided = hold.decision
    ? `  ${hold.decision} by ${hold.decidedBy ?? "?"} ${hold.decidedAt?.toISOString() ?? ""}`
    : "";
  return `${hold.userId}  ${(hold.userName ?? "").padEnd(32)} ${what}  held since ${hold.createdAt.toISOString()}${decided}`;
}

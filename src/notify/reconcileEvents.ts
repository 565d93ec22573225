import { undecidedHoldCounts } from "../db/reconcile/holdRepository.js";
import type { BudgetPolicy, SpendKind } from "../reconcile/budget/budget.js";
import {
  countQueuedReductions,
  countQueuedUsers,
  type NotificationInput,
} from "../db/notify/notificationRepository.js";
import type { Queryable } from "../db/database.js";
import { EVENTS, notify, resolve } from "./events.js";

/**
 * The reconciler's events: held actions waiting for approval (approval.required, approval.decided),
 * the platform budget spent (budget.exhausted), and legacy permission strings the platform refuses
 * (platform.legacy_refused, .ended).
 */

/** Call in the transaction that stores a hold: opens approval.required, or updates its count while unsent. */
export async function holdsChanged(q: Queryable, now: Date): Promise<void> {
  const held = await undecidedHoldCounts(q);
  if (held.count > 0) await notify(q, approvalRequired(now, held));
}

/** Call in the transaction that decides or drops a hold: resolves approval.required once none waits. */
export async function holdSettled(
  q: Queryable,
  now: Date,
  last: { decision: "approved" | "rejected" | "withdrawn"; by: string },
): Promise<void> {
  if ((await undecidedHoldCounts(q)).count === 0) await resolve(q, approvalDecided(now, last));
}

const APPROVALS = "approvals";

/** The breaker (or an email change) held actions; the count grows on the waiting message until it is sent. */
export function approvalRequired(now: Date, held: { count: number; kinds: string[] }): NotificationInput {
  return {
    key: APPROVALS,
    event: EVENTS.approvalRequired,
    occurredAt: now,
    summary: `${held.count} action${held.count === 1 ? "" : "s"} held for approval (${held.kinds.join(", ")})`,
    details: { count: held.count, kinds: held.kinds },
    linkPath: "/admin/approvals",
  };
}

/** No held action waits any more (the last one decided by an admin, or made moot by the IdP). */
function approvalDecided(
  now: Date,
  last: { decision: "approved" | "rejected" | "withdrawn"; by: string },
): NotificationInput {
  return {
    key: APPROVALS,
    event: EVENTS.approvalDecided,
    occurredAt: now,
    summary: `No held actions wait for approval any more (last: ${last.decision} by ${last.by})`,
    details: { lastDecision: last.decision, by: last.by },
    linkPath: "/admin/approvals",
  };
}
/**
 * Call in the transaction of a refused budget debit (live work, not verification). A refused
 * reduction means the reserve itself is spent: it is told apart, once per window too, saying that
 * reductions (access still to be taken away) are waiting.
 */
export async function budgetRefused(
  q: Queryable,
  now: Date,
  policy: BudgetPolicy,
  refused: { used: number; resetsAt: Date; windowStart: Date; kind: SpendKind },
): Promise<void> {
  const [backlog, reductions] = await Promise.all([countQueuedUsers(q), countQueuedReductions(q)]);
  await notify(
    q,
    budgetExhausted(now, {
      windowStart: refused.windowStart,
      used: refused.used,
      limit: policy.limit,
      backlog,
      reductions,
      reserveSpent: refused.kind === "reduction",
      resetsAt: refused.resetsAt,
    }),
  );
}

/** At most once per budget window, and once more if the reserve is spent: the window's start is in the key (a rolling window: its UTC day). */
export function budgetExhausted(
  now: Date,
  budget: {
    windowStart: Date;
    used: number;
    limit: number;
    backlog: number;
    resetsAt: Date;
    /** Queued users whose change takes access away (they go first when the budget allows). */
    reductions?: number;
    reserveSpent?: boolean;
  },
): NotificationInput {
  const reductions = budget.reductions ?? 0;
  const waiting = reductions
    ? `; ${reductions} reduction${reductions === 1 ? "" : "s"} of access waiting (first in line)`
    : "";
  return {
    key: `budget:${budget.windowStart.toISOString().slice(0, 10)}${budget.reserveSpent ? ":reserve" : ""}`,
    event: EVENTS.budgetExhausted,
    occurredAt: now,
    summary: `Platform budget ${budget.reserveSpent ? "and its reserve " : ""}spent (${budget.used}/${budget.limit}); ${budget.backlog} users wait until ${budget.resetsAt.toISOString()}${waiting}`,
    details: {
      used: budget.used,
      limit: budget.limit,
      backlog: budget.backlog,
      reductionsWaiting: reductions,
      reserveSpent: budget.reserveSpent ?? false,
      eta: budget.resetsAt.toISOString(),
    },
    linkPath: "/admin",
  };
}
const LEGACY_REFUSED = "platform-legacy-refused";

/** The platform refused a legacy permission string: grants carrying legacy strings are held. */
export function legacyRefused(now: Date, refused: { value: string; detail: string }): NotificationInput {
  return {
    key: LEGACY_REFUSED,
    event: EVENTS.legacyRefused,
    occurredAt: now,
    summary: `The platform refuses the legacy permission "${refused.value}": grants that carry legacy strings are held until the mapping is migrated (scim-connector mapping migrate FILE --write); reductions go on`,
    details: { value: refused.value, detail: refused.detail, fix: "scim-connector mapping migrate FILE --write" },
    linkPath: "/admin",
  };
}

/** The mapping no longer carries legacy strings and a held grant went out. */
export function legacyRefusedEnded(now: Date): NotificationInput {
  return {
    key: LEGACY_REFUSED,
    event: EVENTS.legacyRefusedEnded,
    occurredAt: now,
    summary: "The mapping speaks granular permissions; held grants are going out",
    details: {},
    linkPath: "/admin",
  };
}

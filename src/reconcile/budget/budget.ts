/**
 * The platform's SCIM budget (5,000 requests per day per company) as the connector spends it.
 * Pure helpers here; the decisions over the ledger are in budgetLedger.ts, its rows in
 * src/db/reconcile/budgetRepository.ts.
 */
export type BudgetWindow = "utc-day" | "rolling-24h";

export type BudgetPolicy = {
  limit: number;
  /** Kept for reductions of access only (docs/reconciler.md, "The budget ledger"). */
  reserve: number;
  window: BudgetWindow;
  /** Kept free of drift verification, for live changes later in the window. */
  verifyHeadroom: number;
};

const DAY_MS = 86_400_000;

export function budgetPolicy(
  limit: number,
  reservePercent: number,
  window: BudgetWindow,
  verifyHeadroomPercent = 10,
): BudgetPolicy {
  const reserve = Math.min(limit - 1, Math.max(0, Math.ceil((limit * reservePercent) / 100)));
  const verifyHeadroom = Math.min(limit - reserve, Math.max(0, Math.ceil((limit * verifyHeadroomPercent) / 100)));
  return { limit, reserve, window, verifyHeadroom };
}

/** The start of the window that `now` falls in (for a rolling window: 24 hours back). */
export function windowStart(now: Date, window: BudgetWindow): Date {
  if (window === "rolling-24h") return new Date(now.getTime() - DAY_MS);
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

/** When a UTC-day window resets (the next midnight UTC). */
export function nextUtcMidnight(now: Date): Date {
  return new Date(windowStart(now, "utc-day").getTime() + DAY_MS);
}

/**
 * What a platform call is spent on: a reduction of access (a lost permission, workspace or team,
 * a strip, a delete; may use the reserve), a live change or lookup, drift verification, or the
 * lowest lane, discovery: the one lookup that confirms an account made by hand
 * (src/platformRecord/discovery.ts, which also waits for the queue to have nothing due).
 * Whatever takes access away is a reduction, whoever decided it (the IdP, an access review).
 */
export type SpendKind = "reduction" | "ordinary" | "verify" | "discover";

/**
 * How many calls a request of this kind may bring the window's total up to: reductions may use
 * the reserve; verification and discovery may not use the reserve nor the headroom kept for live
 * changes (discovery never more than verification: it is the lowest lane).
 */
export function allowance(policy: BudgetPolicy, kind: SpendKind): number {
  if (kind === "reduction") return policy.limit;
  if (kind === "verify" || kind === "discover") return policy.limit - policy.reserve - policy.verifyHeadroom;
  return policy.limit - policy.reserve;
}

/**
 * When work waiting for budget can expect to be done: `pending` calls, with `remainingNow` still
 * spendable in the current window and `perWindow` in each later one. Null when nothing waits.
 */
export function estimateDrain(
  now: Date,
  pending: number,
  remainingNow: number,
  perWindow: number,
  resetsAt: Date,
): Date | null {
  if (pending <= 0) return null;
  if (pending <= remainingNow) return now;
  if (perWindow <= 0) return null;
  const windows = Math.ceil((pending - remainingNow) / perWindow);
  return new Date(resetsAt.getTime() + (windows - 1) * DAY_MS);
}

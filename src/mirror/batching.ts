import type { EmailSubscriptionState, GroupSubscriptionState, SubscriptionGroupEntry } from "../platform/rest.js";

/**
 * Pure batching of pending mirror changes into platform requests. Nothing here does I/O, so the
 * rules (the API's maxima, what may share a request) have table-driven tests.
 *
 * A *unit* is one array the platform accepts: up to 50 identifiers that share a batch key
 * (`/email/status`: one state; `/v2/subscription/status/set`: one group, one state and one kind of
 * identifier, so emails and phones never share an entry). A *request* is one or more units.
 */

export const MAX_IDENTIFIERS_PER_ARRAY = 50;
/**
 * Entries per `/v2/subscription/status/set` request. The document bounds each array at 50 but
 * not the number of entries; we apply the same bound of 50 to the entry list (the emulator
 * enforces it too). 50 full entries are 2,500 identifiers, under 150 KB of JSON for ordinary
 * addresses; a rejected request is bisected in at most 12 halvings.
 */
export const MAX_ENTRIES_PER_SUBSCRIPTION_REQUEST = 50;

export type PendingChange<P> = { key: string; batchKey: string; version: string; payload: P };

export type EmailPayload = { email: string; state: EmailSubscriptionState };
type IdentifierType = "email" | "phone" | "external_id";
export type SubscriptionPayload = { group: string; type: IdentifierType; id: string; state: GroupSubscriptionState };
export type PreferenceCenterPayload = {
  id: string;
  workspace: string;
  name: string | null;
  title: string | null;
  page_html: string;
  confirmation_html: string;
  state: "active" | "draft" | null;
  options: Record<string, unknown> | null;
};

export type Unit<P> = { batchKey: string; changes: PendingChange<P>[] };

/** Groups changes by batch key (first-seen order) and cuts each group into units of at most `size`. */
export function toUnits<P>(changes: readonly PendingChange<P>[], size = MAX_IDENTIFIERS_PER_ARRAY): Unit<P>[] {
  const groups = new Map<string, PendingChange<P>[]>();
  for (const change of changes) {
    const group = groups.get(change.batchKey);
    if (group) group.push(change);
    else groups.set(change.batchKey, [change]);
  }
  const units: Unit<P>[] = [];
  for (const [batchKey, group] of groups) {
    for (let i = 0; i < group.length; i += size) units.push({ batchKey, changes: group.slice(i, i + size) });
  }
  return units;
}

export type PushPlan<P> = { requests: Unit<P>[][]; leftover: PendingChange<P>[] };

export type PlanOptions = {
  unitsPerRequest: number;
  /** The claim hit its row limit: more of its last batch key (and beyond) is still pending. */
  claimWasFull: boolean;
  /** Changes are still arriving (the newest claimed change is younger than the linger time). */
  busy?: boolean;
  unitSize?: number;
};

/**
 * Packs units into requests of at most `unitsPerRequest` and hands back what should wait:
 * - busy: only full units in full requests go; partial ones wait for the changes still arriving
 *   (an ETL writing 200,000 rows fills them within moments), like a producer's linger;
 * - a full claim: its last unit may be cut short by the row limit, and a last request short of
 *   units would be followed by more, so both wait for the next claim;
 * - otherwise everything goes: this is all there is.
 * Claims are ordered by batch key, so only the last unit of a full claim can be cut short.
 */
export function planPushes<P>(units: readonly Unit<P>[], options: PlanOptions): PushPlan<P> {
  const unitSize = options.unitSize ?? MAX_IDENTIFIERS_PER_ARRAY;
  const leftover: PendingChange<P>[] = [];
  let kept = [...units];
  if (options.busy) {
    kept = units.filter((u) => u.changes.length >= unitSize);
    for (const u of units) if (u.changes.length < unitSize) leftover.push(...u.changes);
  } else if (options.claimWasFull && kept.length > 1 && kept[kept.length - 1].changes.length < unitSize) {
    leftover.push(...kept.pop()!.changes);
  }
  const requests: Unit<P>[][] = [];
  for (let i = 0; i < kept.length; i += options.unitsPerRequest)
    requests.push(kept.slice(i, i + options.unitsPerRequest));
  const last = requests[requests.length - 1];
  const holdShortLast = options.busy || (options.claimWasFull && requests.length > 1);
  if (last && holdShortLast && last.length < options.unitsPerRequest) {
    requests.pop();
    for (const unit of last) leftover.push(...unit.changes);
  }
  return { requests, leftover };
}

/** The minimum number of requests for a set of changes: the figure benchmarks compare against. */
export function minimumRequests<P>(changes: readonly PendingChange<P>[], unitsPerRequest: number): number {
  return Math.ceil(toUnits(changes).length / unitsPerRequest);
}

export function emailStatusBody(unit: Unit<EmailPayload>): { emails: string[]; state: EmailSubscriptionState } {
  return { emails: unit.changes.map((c) => c.payload.email), state: unit.changes[0].payload.state };
}

const ARRAY_FOR: Record<IdentifierType, "emails" | "phones" | "external_ids"> = {
  email: "emails",
  phone: "phones",
  external_id: "external_ids",
};

export function subscriptionEntry(unit: Unit<SubscriptionPayload>): SubscriptionGroupEntry {
  const first = unit.changes[0].payload;
  return {
    subscription_group_id: first.group,
    subscription_state: first.state,
    [ARRAY_FOR[first.type]]: unit.changes.map((c) => c.payload.id),
  };
}

/** Splits a rejected batch in two halves for bisection (the first half gets the odd one). */
export function halves<T>(items: readonly T[]): [T[], T[]] {
  const middle = Math.ceil(items.length / 2);
  return [items.slice(0, middle), items.slice(middle)];
}

import { BadRequestError } from "../errors.js";
import { unknownAssignments } from "../mapping/catalogue.js";
import type { AssignedAttribute, Assignment, Catalogue, CatalogueEntry } from "../mapping/compiled.js";
import { ASSIGNMENT_REFS, type AssignmentRef, type AssignmentsChanged } from "../vocabulary/reconcile.js";

/**
 * A user's `roles[]` and `entitlements[]` as assignments of the mapping's catalogue: read from the
 * stored resource, and checked on each write so that a value the catalogue does not have is
 * refused with a 400 naming it, instead of being kept and silently granting nothing. Only when the
 * mapping declares a catalogue: without one, they are stored as before. A write that changes them
 * is named by what it assigned and removed (`assignmentsChange`), for the log's trigger.
 */

const ATTRIBUTES: readonly AssignedAttribute[] = ["roles", "entitlements"];

/** The values of a resource's roles[] and entitlements[] (items without a string `value` carry none). */
function assignmentsOf(resource: Record<string, unknown>): Assignment[] {
  return ATTRIBUTES.flatMap((attribute) => {
    const items = resource[attribute];
    if (!Array.isArray(items)) return [];
    return items.flatMap((item: unknown) => {
      const value = (item as { value?: unknown } | null)?.value;
      return typeof value === "string" ? [{ attribute, value }] : [];
    });
  });
}

const key = (a: Assignment) => `${a.attribute}\u0000${a.value.toLowerCase()}`;

/**
 * Refuses the write when it brings a value the catalogue does not have. Only values the write
 * adds are checked (`previous`: the user before a PATCH): an entry removed from the catalogue
 * later does not block the IdP's other changes to its users. Reads the catalogue only when there
 * is something to check, so a write without roles or entitlements costs nothing more.
 */
export async function checkAssignments(
  resource: Record<string, unknown>,
  previous: Record<string, unknown> | undefined,
  catalogue: () => Promise<Catalogue>,
): Promise<void> {
  const before = new Set(previous ? assignmentsOf(previous).map(key) : []);
  const added = assignmentsOf(resource).filter((a) => !before.has(key(a)));
  if (!added.length) return;
  const declared = await catalogue();
  // No catalogue: the feature is off, and values are stored as before (they grant nothing). An IdP
  // already sending roles for its own reasons (Entra's role mapping) must not start failing.
  if (declared.entries.length === 0) return;
  const unknown = unknownAssignments(added, declared);
  if (!unknown.length) return;
  const named = unknown
    .slice(0, 10)
    .map((a) => `${a.attribute} value ${JSON.stringify(a.value.slice(0, 128))}`)
    .join(", ");
  throw new BadRequestError(
    `Not in the catalogue of platform access (the mapping file's \`catalogue:\`; /Roles and /Entitlements list it): ${named}${unknown.length > 10 ? `, and ${unknown.length - 10} more` : ""}`,
    "invalidValue",
  );
}

/**
 * What a write did to the user's roles[] and entitlements[] (`previous`: the user before it), with
 * each value named as the catalogue names it now, so the log keeps the name it had at the time.
 * Undefined when they did not change; reads the catalogue only when they did.
 */
export async function assignmentsChange(
  resource: Record<string, unknown>,
  previous: Record<string, unknown>,
  catalogue: () => Promise<Catalogue>,
): Promise<AssignmentsChanged | undefined> {
  const diff = (from: Assignment[], to: Assignment[]) => {
    const kept = new Set(to.map(key));
    const seen = new Set<string>();
    return from.filter((a) => !kept.has(key(a)) && !seen.has(key(a)) && seen.add(key(a)));
  };
  const now = assignmentsOf(resource);
  const before = assignmentsOf(previous);
  const assigned = diff(now, before);
  const removed = diff(before, now);
  if (!assigned.length && !removed.length) return undefined;
  const declared = await catalogue();
  const byId = new Map(declared.entries.map((e) => [e.id.toLowerCase(), e]));
  const ref = (a: Assignment): AssignmentRef => refOf(a, byId.get(a.value.toLowerCase()));
  const unlisted = Math.max(0, assigned.length - ASSIGNMENT_REFS) + Math.max(0, removed.length - ASSIGNMENT_REFS);
  return {
    what: "assignments-changed",
    assigned: assigned.slice(0, ASSIGNMENT_REFS).map(ref),
    removed: removed.slice(0, ASSIGNMENT_REFS).map(ref),
    ...(unlisted ? { unlisted } : {}),
    assignedIn: declared.assignedIn,
  };
}

/** A value as the log keeps it: its catalogue entry's display name, else the value alone (bounded). */
function refOf(a: Assignment, entry: CatalogueEntry | undefined): AssignmentRef {
  const value = a.value.slice(0, 128);
  return entry && entry.displayName !== value
    ? { attribute: a.attribute, value, name: entry.displayName }
    : { attribute: a.attribute, value };
}

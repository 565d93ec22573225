import { BadRequestError } from "../errors.js";
import { unknownAssignments, type AssignedAttribute, type Assignment, type Catalogue } from "../mapping/catalogue.js";

/**
 * A user's `roles[]` and `entitlements[]` as assignments of the mapping's catalogue: read from the
 * stored resource, and checked on each write so that a value the catalogue does not have is
 * refused with a 400 naming it, instead of being kept and silently granting nothing. Only when the
 * mapping declares a catalogue: without one, they are stored as before.
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

import { z } from "zod";
import type {
  AssignedAttribute,
  Assignment,
  Catalogue,
  CatalogueEntry,
  CatalogueType,
  MappingRule,
} from "./compiled.js";
import type { Locator, MappingProblem } from "./problems.js";

/**
 * The catalogue (`catalogue:` in the mapping file): platform access an IdP assigns directly, as a
 * user's `roles[]` or `entitlements[]` (Okta Identity Governance, Entra app roles), beside group
 * rules. Each entry has a stable id (the value the IdP sends), a display name, a type and what it
 * grants. An entry compiles to a rule that no group matches: an assigned value gives that rule's
 * grants, unioned with the group rules', so the reconciler treats it like any grant.
 */

/** Stable ids: what the IdP stores and sends back, so a letter, digit, `.`, `_`, `:` or `-`. */
const CATALOGUE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export const EMPTY_CATALOGUE: Catalogue = { assignedIn: "the IdP", entries: [] };

/** `name:` and/or `id:` of a workspace, team, role or permission set, as in a rule. */
type Ref = string | { name?: string | undefined; id?: string | undefined };

/** The zod schema of the section; `reference` is the file's own (a name, or `{ name, id }`). */
export function catalogueSchema<R extends z.ZodType<Ref>>(name: z.ZodString, reference: R) {
  const base = {
    id: z.string().trim().regex(CATALOGUE_ID, "must be a stable id: letters, digits, '.', '_', ':' or '-'"),
    displayName: name,
    description: z.string().optional(),
  };
  const entry = z.discriminatedUnion("type", [
    z.strictObject({ ...base, type: z.literal("role"), role: reference }),
    z.strictObject({ ...base, type: z.literal("permissionSet"), workspace: reference, permissionSet: reference }),
    z.strictObject({
      ...base,
      type: z.literal("team"),
      workspace: reference,
      team: reference,
      permissions: z.array(name).min(1),
    }),
    z.strictObject({
      ...base,
      type: z.literal("workspacePermissions"),
      workspace: reference,
      permissions: z.array(name).min(1),
    }),
  ]);
  return z.strictObject({ assignedIn: name.default("the IdP"), entries: z.array(entry).default([]) });
}

export type CatalogueSection = z.infer<ReturnType<typeof catalogueSchema>>;
type EntryInput = CatalogueSection["entries"][number];

/** The entries as rules: `firstIndex` is the number of group rules, so catalogue rules sort after them. */
export function compileCatalogue(
  section: CatalogueSection | undefined,
  firstIndex: number,
  lineOf: (i: number) => number,
  refKey: (ref: Ref) => string,
): Catalogue {
  if (!section) return EMPTY_CATALOGUE;
  return {
    assignedIn: section.assignedIn,
    entries: section.entries.map((e, i) => ({
      id: e.id,
      displayName: e.displayName,
      type: e.type,
      description: e.description ?? null,
      line: lineOf(i),
      rule: entryRule(e, firstIndex + i, lineOf(i), refKey),
    })),
  };
}

function entryRule(e: EntryInput, index: number, line: number, refKey: (ref: Ref) => string): MappingRule {
  const rule: MappingRule = {
    index,
    line,
    description: e.displayName,
    groups: [],
    companyPermissions: [],
    roles: [],
    workspaces: [],
  };
  if (e.type === "role") return { ...rule, roles: [refKey(e.role)] };
  const workspace = { name: refKey(e.workspace), permissions: [], permissionSets: [], teams: [] };
  if (e.type === "permissionSet")
    return { ...rule, workspaces: [{ ...workspace, permissionSets: [refKey(e.permissionSet)] }] };
  if (e.type === "team")
    return {
      ...rule,
      workspaces: [{ ...workspace, teams: [{ name: refKey(e.team), permissions: e.permissions }] }],
    };
  return { ...rule, workspaces: [{ ...workspace, permissions: e.permissions }] };
}

/** Ids compared without case: an IdP may not keep the case of a value it stores. */
const idKey = (id: string) => id.toLowerCase();

function findEntry(catalogue: Catalogue, value: string): CatalogueEntry | undefined {
  const key = idKey(value);
  return catalogue.entries.find((e) => idKey(e.id) === key);
}

/** The catalogue entries a user's assignments give, in catalogue order, each with the attributes that carry it. */
export function assignedEntries(
  assignments: readonly Assignment[] | undefined,
  catalogue: Catalogue,
): { entry: CatalogueEntry; attributes: AssignedAttribute[] }[] {
  if (!assignments?.length) return [];
  const out: { entry: CatalogueEntry; attributes: AssignedAttribute[] }[] = [];
  for (const entry of catalogue.entries) {
    const attributes = [
      ...new Set(assignments.filter((a) => idKey(a.value) === idKey(entry.id)).map((a) => a.attribute)),
    ].sort();
    if (attributes.length) out.push({ entry, attributes });
  }
  return out;
}

/** The assigned values no catalogue entry has: what a SCIM write is refused for. */
export function unknownAssignments(assignments: readonly Assignment[], catalogue: Catalogue): Assignment[] {
  return assignments.filter((a) => findEntry(catalogue, a.value) === undefined);
}

/** "assigned role Marketer – Fashion Brands in Okta" (an entitlement: "assigned entitlement …"). */
export function assignmentWords(
  entry: { displayName: string; type: CatalogueType },
  attributes: readonly AssignedAttribute[],
  assignedIn: string,
): string {
  const noun =
    attributes.includes("roles") || (attributes.length === 0 && entry.type === "role") ? "role" : "entitlement";
  return `assigned ${noun} ${entry.displayName} in ${assignedIn}`;
}

const grantsOf = (e: CatalogueEntry) => JSON.stringify([e.type, e.rule.roles, e.rule.workspaces]);

/**
 * The ids whose grants a catalogue change alters (added, removed, or granting something else): the
 * users assigned one may change. A new display name or description changes no grant.
 */
export function changedCatalogueIds(before: Catalogue | undefined, after: Catalogue): string[] {
  return [...new Set(changedCatalogueEntries(before, after).map((e) => idKey(e.id)))].sort();
}

/**
 * The same entries as the log names them: an added or changed one by the new file's display name and
 * line, a removed one by the old file's, for "mapping change: catalogue entry EU analyst, line 61".
 */
export function changedCatalogueEntries(
  before: Catalogue | undefined,
  after: Catalogue,
): { id: string; line: number; name: string; removed?: true }[] {
  const old = new Map((before?.entries ?? []).map((e) => [idKey(e.id), grantsOf(e)]));
  const now = new Set(after.entries.map((e) => idKey(e.id)));
  const changed = after.entries
    .filter((e) => old.get(idKey(e.id)) !== grantsOf(e))
    .map((e) => ({ id: e.id, line: e.line, name: e.displayName }));
  const removed = (before?.entries ?? [])
    .filter((e) => !now.has(idKey(e.id)))
    .map((e) => ({ id: e.id, line: e.line, name: e.displayName, removed: true as const }));
  return [...changed, ...removed];
}

/** The checks zod cannot express: ids unique (without case). */
export function checkCatalogue(data: unknown, locate: Locator): MappingProblem[] {
  const section = (data as { catalogue?: { entries?: unknown } } | null)?.catalogue;
  const entries = Array.isArray(section?.entries) ? (section.entries as unknown[]) : [];
  const seen = new Map<string, number>();
  const problems: MappingProblem[] = [];
  entries.forEach((raw, i) => {
    const id = (raw as { id?: unknown } | null)?.id;
    if (typeof id !== "string") return;
    const first = seen.get(idKey(id.trim()));
    if (first !== undefined)
      problems.push(
        locate.problem(
          ["catalogue", "entries", i, "id"],
          `catalogue id '${id}' is already used by entry ${first + 1}: ids are what the IdP assigns, so each must be unique (case does not count)`,
        ),
      );
    else seen.set(idKey(id.trim()), i);
  });
  return problems;
}

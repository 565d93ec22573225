import { isLegacyOnly, LEGACY_TO_GRANULAR, type GranularEquivalent } from "../vocabulary/permissions.js";
import type { Locator, MappingProblem } from "./problems.js";
import type { DesiredDashboardUser } from "./types.js";

/**
 * The mapping's side of the platform's move to granular permissions: which strings of a file are
 * legacy, what each becomes (the published table, completed by the operator's
 * `vocabulary.equivalents` where the platform publishes only a display name), and a dashboard user
 * translated from legacy to granular terms, so that the reconciler compares like with like and an
 * account whose access does not change costs no call.
 */

/** `vocabulary.equivalents`: display name or unlisted legacy string → granular SCIM string(s). */
export type Equivalents = Readonly<Record<string, string | readonly string[]>>;

/** A legacy string's granular strings, or what is missing to know them (display names, or the string itself). */
export type Translation = { strings: string[] } | { unresolved: string[] };

export function granularOf(permission: string, equivalents: Equivalents): Translation {
  if (Object.hasOwn(equivalents, permission)) return { strings: [equivalents[permission]!].flat() };
  if (!Object.hasOwn(LEGACY_TO_GRANULAR, permission)) return { strings: [permission] };
  const table = LEGACY_TO_GRANULAR[permission];
  if (!table) return { unresolved: [permission] };
  const strings: string[] = [];
  const unresolved: string[] = [];
  for (const equivalent of table) {
    const resolved = resolve(equivalent, equivalents);
    if (resolved) strings.push(...resolved);
    else unresolved.push((equivalent as { display: string }).display);
  }
  return unresolved.length ? { unresolved } : { strings };
}

function resolve(equivalent: GranularEquivalent, equivalents: Equivalents): string[] | undefined {
  if ("scim" in equivalent) return [equivalent.scim];
  return Object.hasOwn(equivalents, equivalent.display) ? [equivalents[equivalent.display]!].flat() : undefined;
}

/**
 * The same dashboard user in granular terms: every legacy workspace and team string replaced by
 * its equivalents (company strings mean the same in both models). Undefined when a string has no
 * known equivalent: the two states cannot be compared, and the reconciler sends the desired one.
 */
export function toGranular(user: DesiredDashboardUser, equivalents: Equivalents): DesiredDashboardUser | undefined {
  let missing = false;
  const translate = (permissions: readonly string[]): string[] => {
    const out = new Set<string>();
    for (const p of permissions) {
      const t = granularOf(p, equivalents);
      if ("unresolved" in t) missing = true;
      else for (const s of t.strings) out.add(s);
    }
    return [...out].sort();
  };
  const workspaces = user.workspaces.map((ws) => ({
    ...ws,
    appGroupPermissions: translate(ws.appGroupPermissions),
    team: ws.team.map((t) => ({ ...t, teamPermissions: translate(t.teamPermissions) })),
  }));
  if (missing) return undefined;
  return { ...user, workspaces, permissionModel: "granular" };
}

/**
 * Which model a dashboard user's strings are in: as recorded (`permissionModel`), else by its
 * strings: a legacy-only one (basic_access) makes it legacy, a granular-only one (or a role)
 * granular; strings spelled alike in both (admin, view_pii) leave it open ("either").
 */
export function modelOfUser(user: DesiredDashboardUser): "legacy" | "granular" | "either" {
  if (user.permissionModel === "granular") return "granular";
  let granular = (user.roles?.length ?? 0) > 0;
  for (const p of workspaceAndTeamPermissions(user)) {
    if (isLegacyOnly(p)) return "legacy";
    if (!Object.hasOwn(LEGACY_TO_GRANULAR, p)) granular = true;
  }
  return granular ? "granular" : "either";
}

/** The legacy-only strings a dashboard user carries, workspace and team levels. */
export function legacyStringsIn(user: DesiredDashboardUser): string[] {
  const out = new Set<string>();
  for (const p of workspaceAndTeamPermissions(user)) if (isLegacyOnly(p)) out.add(p);
  return [...out];
}

/** Every workspace and team permission string of a dashboard user (the levels whose strings the models differ on). */
function* workspaceAndTeamPermissions(user: DesiredDashboardUser): Generator<string> {
  for (const ws of user.workspaces) {
    yield* ws.appGroupPermissions;
    for (const team of ws.team) yield* team.teamPermissions;
  }
}

/**
 * The platform's API identifiers are UUIDs; the desired state keys what the mapping names by one
 * as `id:<identifier>` (lower case), and by name otherwise.
 */
export const API_IDENTIFIER = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const ID_KEY_PREFIX = "id:";

/**
 * The two states in the same terms: when one is granular and the other legacy, the legacy one is
 * translated. `rebased` says a translation happened (the account's record changes model, nothing
 * is sent for that alone).
 */
export function inSameTerms(
  before: DesiredDashboardUser | null,
  after: DesiredDashboardUser | null,
  equivalents: Equivalents,
): { before: DesiredDashboardUser | null; after: DesiredDashboardUser | null; rebased: boolean } {
  if (!before || !after) return { before, after, rebased: false };
  const [a, b] = [modelOfUser(before), modelOfUser(after)];
  if (a === "legacy" && b === "granular") {
    const translated = toGranular(before, equivalents);
    if (translated) return { before: translated, after, rebased: true };
  }
  if (a === "granular" && b === "legacy") {
    const translated = toGranular(after, equivalents);
    if (translated) return { before, after: translated, rebased: false };
  }
  return { before, after, rebased: false };
}

/** The legacy-only strings a raw (parsed YAML) mapping uses in its rules, with their paths. */
export function legacyStringsOf(data: unknown): { permission: string; path: (string | number)[] }[] {
  const found: { permission: string; path: (string | number)[] }[] = [];
  const rules = (data as { rules?: unknown } | null)?.rules;
  if (!Array.isArray(rules)) return found;
  const scan = (list: unknown, path: (string | number)[]) => {
    if (!Array.isArray(list)) return;
    list.forEach((p, i) => {
      if (typeof p === "string" && isLegacyOnly(p)) found.push({ permission: p, path: [...path, i] });
    });
  };
  rules.forEach((rule, r) => {
    const workspaces = (rule as { workspaces?: unknown } | null)?.workspaces;
    if (!Array.isArray(workspaces)) return;
    workspaces.forEach((ws, w) => {
      const at = ["rules", r, "workspaces", w];
      scan((ws as { permissions?: unknown } | null)?.permissions, [...at, "permissions"]);
      const teams = (ws as { teams?: unknown } | null)?.teams;
      if (Array.isArray(teams))
        teams.forEach((t, i) =>
          scan((t as { permissions?: unknown } | null)?.permissions, [...at, "teams", i, "permissions"]),
        );
    });
  });
  return found;
}

/** One warning per legacy string (at its first use): what it becomes, and how to move. */
export function legacyWarnings(data: unknown, equivalents: Equivalents, locate: Locator): MappingProblem[] {
  const seen = new Set<string>();
  const warnings: MappingProblem[] = [];
  for (const { permission, path } of legacyStringsOf(data)) {
    if (seen.has(permission)) continue;
    seen.add(permission);
    warnings.push(locate.problem(path, legacyWarningText(permission, equivalents)));
  }
  return warnings;
}

function legacyWarningText(permission: string, equivalents: Equivalents): string {
  const t = granularOf(permission, equivalents);
  const becomes =
    "strings" in t
      ? `granular: ${summarise(t.strings)}`
      : `its granular equivalent ${t.unresolved.map((d) => `"${d}"`).join(", ")} has no published SCIM string: add it under vocabulary.equivalents`;
  return `legacy permission '${permission}' (${becomes}); the platform refuses legacy strings from December 2026: run \`scim-connector mapping migrate FILE\``;
}

/** A list of strings, shortened past six: "view_campaigns, edit_campaigns, … (43)". */
function summarise(strings: readonly string[]): string {
  if (strings.length <= 6) return strings.join(", ") || "nothing";
  return `${strings.slice(0, 3).join(", ")}, … (${strings.length})`;
}

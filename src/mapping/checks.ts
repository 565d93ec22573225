import type { z } from "zod";
import { describePath, didYouMean, type Locator, type MappingProblem } from "./problems.js";
import { backtrackingHazard } from "./groupPattern.js";
import { isLegacyOnly, type MappingVocabulary, type PermissionModel } from "../vocabulary/permissions.js";

/**
 * The two halves of mapping validation that produce messages: turning zod's issues into
 * "line, problem, fix" sentences, and the checks zod cannot express (regular expressions,
 * the permission vocabulary, allowed departments, rules that match nothing).
 */

type Path = (string | number)[];

/** The keys each kind of object in the file accepts, for "did you mean" on unknown keys. */
const KEYS = {
  top: ["permissionModel", "department", "rules", "vocabulary", "catalogue"],
  catalogue: ["assignedIn", "entries"],
  entry: ["id", "displayName", "type", "description", "role", "workspace", "permissionSet", "team", "permissions"],
  department: ["default", "fromAttribute", "translate", "allowed"],
  vocabulary: ["enabled", "companyPermissions", "workspacePermissions", "teamPermissions", "equivalents"],
  rule: [
    "description",
    "group",
    "groups",
    "groupExternalId",
    "groupPattern",
    "department",
    "companyPermissions",
    "roles",
    "workspaces",
  ],
  workspace: ["name", "id", "permissions", "permissionSets", "teams"],
  team: ["name", "id", "permissions"],
} as const;

function keysAt(path: Path): readonly string[] {
  if (path.length === 0) return KEYS.top;
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  if (typeof last === "number") {
    if (parent === "rules") return KEYS.rule;
    if (parent === "workspaces") return KEYS.workspace;
    if (parent === "teams") return KEYS.team;
    if (parent === "entries") return KEYS.entry;
  }
  if (last === "catalogue" && path.length === 1) return KEYS.catalogue;
  if (last === "department" && path.length === 1) return KEYS.department;
  if (last === "vocabulary") return KEYS.vocabulary;
  return [];
}

function where(path: Path): string {
  return path.length ? ` in ${describePath(path)}` : "";
}

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let current = data;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

const EXPECTED: Record<string, string> = {
  array: "a list, e.g. `[a, b]` or one `- item` per line",
  string: "text (put it in quotes if it looks like a number, a date or yes/no)",
  boolean: "true or false",
  object: "a block of `key: value` lines",
  record: "a block of `key: value` lines",
};

function kindOf(value: unknown): string {
  if (value === null) return "empty";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a block of keys";
  return `${typeof value} ${JSON.stringify(value)}`;
}

export function zodIssueToProblems(issue: z.core.$ZodIssue, locate: Locator, data: unknown): MappingProblem[] {
  const path = issue.path.filter((k): k is string | number => typeof k !== "symbol");
  if (issue.code === "unrecognized_keys") {
    const allowed = keysAt(path);
    return issue.keys.map((key) => {
      const guess = didYouMean(key, allowed);
      const fix = guess
        ? `did you mean '${guess}'?`
        : `allowed keys here are ${allowed.map((k) => `'${k}'`).join(", ")}`;
      return locate.keyProblem(path, key, `unknown key '${key}'${where(path)}: ${fix}`);
    });
  }
  const field = path.length ? describePath(path) : "the file";
  if (issue.code === "invalid_type") {
    const value = valueAt(data, path);
    if (value === undefined) {
      const key = path[path.length - 1];
      return [
        locate.problem(
          path.slice(0, -1),
          `${field} is missing: add \`${String(key)}:\` with ${EXPECTED[issue.expected] ?? issue.expected}`,
        ),
      ];
    }
    return [
      locate.problem(path, `${field} must be ${EXPECTED[issue.expected] ?? issue.expected}, not ${kindOf(value)}`),
    ];
  }
  if (issue.code === "too_small" && issue.origin === "string")
    return [locate.problem(path, `${field} must not be empty`)];
  return [locate.problem(path, `${field}: ${issue.message}`)];
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const texts = (v: unknown): string[] => list(v).filter((x): x is string => typeof x === "string");
const record = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/**
 * The checks zod cannot express. They read the raw parsed YAML defensively (skipping what has
 * the wrong shape, which the schema reports), so one run lists every problem in the file.
 */
export function checkMappingSemantics(
  data: unknown,
  vocabulary: MappingVocabulary | null,
  locate: Locator,
  model: PermissionModel = "legacy",
): MappingProblem[] {
  const problems: MappingProblem[] = [];
  const add = (path: Path, message: string) => problems.push(locate.problem(path, message));
  const file = record(data);
  const department = record(file.department);

  const allowed = Array.isArray(department.allowed) ? texts(department.allowed) : undefined;
  const checkDepartment = (path: Path, value: string | undefined) => {
    if (value === undefined || !allowed || allowed.includes(value)) return;
    const guess = didYouMean(value, allowed);
    add(
      path,
      `department '${value}' is not in department.allowed${guess ? `: did you mean '${guess}'?` : ""} (allowed: ${allowed.join(", ")})`,
    );
  };
  checkDepartment(["department", "default"], text(department.default));
  for (const [from, to] of Object.entries(record(department.translate)))
    checkDepartment(["department", "translate", from], text(to));

  const checkPermissions = (
    path: Path,
    names: unknown,
    known: readonly string[] | undefined,
    level: "company" | "workspace" | "team",
  ) => {
    if (!known) return;
    list(names).forEach((permission, i) => {
      if (typeof permission !== "string" || known.includes(permission)) return;
      if (model === "granular" && isLegacyOnly(permission)) {
        add(
          [...path, i],
          `'${permission}' is a legacy permission in a granular mapping (permissionModel: granular): replace it with its granular equivalents (\`scim-connector mapping migrate\` prints them), or declare permissionModel: legacy`,
        );
        return;
      }
      const guess = didYouMean(permission, known);
      const hint = guess ? `did you mean '${guess}'? Otherwise add` : "add";
      add(
        [...path, i],
        `unknown ${level} permission '${permission}': ${hint} it to vocabulary.${level}Permissions, or set vocabulary.enabled: false`,
      );
    });
  };

  list(file.rules).forEach((rawRule, r) => {
    const rule = record(rawRule);
    const at: Path = ["rules", r];
    const matchers = [rule.group, rule.groupExternalId, rule.groupPattern, ...list(rule.groups)].filter(
      (m) => m !== undefined && m !== null,
    );
    if (matchers.length === 0)
      add(at, `rule ${r + 1} matches no group: add \`group:\`, \`groups:\`, \`groupExternalId:\` or \`groupPattern:\``);
    const pattern = text(rule.groupPattern);
    if (pattern !== undefined) {
      let hazard: string | undefined;
      try {
        new RegExp(pattern, "i");
        hazard = backtrackingHazard(pattern);
      } catch (error) {
        const reason = (error as Error).message.replace(/^Invalid regular expression: /, "");
        add(
          [...at, "groupPattern"],
          `groupPattern is not a valid regular expression (${reason}): escape special characters such as ( [ + * ? with a backslash`,
        );
      }
      if (hazard) add([...at, "groupPattern"], `groupPattern '${pattern}' is refused: ${hazard}`);
    }
    checkDepartment([...at, "department"], text(rule.department));
    checkPermissions([...at, "companyPermissions"], rule.companyPermissions, vocabulary?.companyPermissions, "company");
    list(rule.workspaces).forEach((rawWs, w) => {
      const ws = record(rawWs);
      const wsAt: Path = [...at, "workspaces", w];
      if (
        list(ws.permissions).length === 0 &&
        list(ws.permissionSets).length === 0 &&
        list(ws.teams).length === 0 &&
        !("permissions" in ws && !Array.isArray(ws.permissions))
      ) {
        add(
          wsAt,
          `workspace '${text(ws.name) ?? w + 1}' grants nothing: add \`permissions:\`, \`permissionSets:\` or \`teams:\``,
        );
      }
      checkPermissions([...wsAt, "permissions"], ws.permissions, vocabulary?.workspacePermissions, "workspace");
      if (model === "granular" && list(ws.permissions).length > 0 && list(ws.permissionSets).length > 0)
        add(
          wsAt,
          `workspace '${text(ws.name) ?? text(ws.id) ?? w + 1}' gives both permissions and a permission set: the platform takes permissions OR one permission set per workspace; split them into two rules or keep one`,
        );
      if (model === "granular" && list(ws.permissionSets).length > 1)
        add(
          [...wsAt, "permissionSets"],
          `workspace '${text(ws.name) ?? text(ws.id) ?? w + 1}' gives ${list(ws.permissionSets).length} permission sets: the platform takes one per workspace`,
        );
      list(ws.teams).forEach((rawTeam, t) => {
        const team = record(rawTeam);
        const teamAt: Path = [...wsAt, "teams", t];
        if (list(team.permissions).length === 0 && !("permissions" in team && !Array.isArray(team.permissions))) {
          add(
            teamAt,
            `team '${text(team.name) ?? t + 1}' grants nothing: add \`permissions: [basic_access]\` or similar`,
          );
        }
        checkPermissions([...teamAt, "permissions"], team.permissions, vocabulary?.teamPermissions, "team");
      });
    });
  });
  list(record(file.catalogue).entries).forEach((rawEntry, e) => {
    const entry = record(rawEntry);
    const at: Path = ["catalogue", "entries", e, "permissions"];
    if (entry.type === "team") checkPermissions(at, entry.permissions, vocabulary?.teamPermissions, "team");
    if (entry.type === "workspacePermissions")
      checkPermissions(at, entry.permissions, vocabulary?.workspacePermissions, "workspace");
  });
  return problems;
}

/** Every problem once, in file order. */
export function sortProblems(problems: MappingProblem[]): MappingProblem[] {
  const seen = new Set<string>();
  return problems
    .filter((p) => {
      const key = `${p.line}:${p.column}:${p.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((a, b) => a.line - b.line || a.column - b.column);
}

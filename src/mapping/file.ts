import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { checkMappingSemantics, sortProblems, zodIssueToProblems } from "./checks.js";
import { Locator, MappingError, type MappingProblem } from "./problems.js";
import { DEFAULT_VOCABULARY, type MappingVocabulary } from "./vocabulary.js";

export { MappingError } from "./problems.js";
/**
 * The mapping file (`MAPPING_FILE`): which IdP groups give which dashboard permissions.
 * Read once at boot and on reload, validated strictly (unknown keys, bad regular expressions,
 * permission names outside the vocabulary, departments outside `allowed`), every problem
 * reported with its line and the fix. `config/mapping.example.yaml` documents the format.
 */

const name = z.string().trim().min(1);
const nameList = z.array(name);

const teamSchema = z.strictObject({
  name,
  permissions: nameList.default([]),
});

const workspaceSchema = z.strictObject({
  name,
  permissions: nameList.default([]),
  permissionSets: nameList.default([]),
  teams: z.array(teamSchema).default([]),
});

const ruleSchema = z.strictObject({
  /** Shown in the admin UI beside the rule; no effect on matching. */
  description: z.string().optional(),
  group: name.optional(),
  groups: nameList.optional(),
  groupExternalId: name.optional(),
  groupPattern: name.optional(),
  department: name.optional(),
  companyPermissions: nameList.default([]),
  workspaces: z.array(workspaceSchema).default([]),
});

const departmentSchema = z.strictObject({
  default: name,
  fromAttribute: z.boolean().default(true),
  translate: z.record(z.string(), name).default({}),
  allowed: nameList.optional(),
});

const vocabularySchema = z.strictObject({
  enabled: z.boolean().default(true),
  companyPermissions: nameList.optional(),
  workspacePermissions: nameList.optional(),
  teamPermissions: nameList.optional(),
});

const mappingFileSchema = z.strictObject({
  department: departmentSchema,
  rules: z.array(ruleSchema),
  vocabulary: vocabularySchema.optional(),
});

export type MappingFile = z.infer<typeof mappingFileSchema>;

type MappingTeam = { name: string; permissions: string[] };
type MappingWorkspace = { name: string; permissions: string[]; permissionSets: string[]; teams: MappingTeam[] };

export type MappingRule = {
  /** 0-based position in the file; rules are applied in this order. */
  index: number;
  /** 1-based line of the rule in the file, for messages and the admin UI. */
  line: number;
  description?: string;
  /** Group displayNames (from `group` and `groups`), matched case-insensitively. */
  groups: string[];
  groupExternalId?: string;
  /** Compiled case-insensitively, like `group`: IdPs do not keep the case of names stable. */
  groupPattern?: RegExp;
  department?: string;
  companyPermissions: string[];
  workspaces: MappingWorkspace[];
};

export type DepartmentPolicy = {
  default: string;
  fromAttribute: boolean;
  translate: Record<string, string>;
  allowed?: string[];
};

export type Mapping = {
  /** The file name the mapping came from (for messages). */
  source: string;
  department: DepartmentPolicy;
  rules: MappingRule[];
  /** null when the file turned the vocabulary check off. */
  vocabulary: MappingVocabulary | null;
  /** Stable over formatting, comments and key order; changes when the meaning may change. */
  hash: string;
};

export async function loadMappingFile(path: string): Promise<Mapping> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    const fix =
      code === "ENOENT"
        ? "create it (copy config/mapping.example.yaml) or set MAPPING_FILE"
        : `cannot read it (${code ?? "error"})`;
    throw new MappingError([
      { source: path, line: 1, column: 1, message: `mapping file not found or unreadable: ${fix}` },
    ]);
  }
  return parseMapping(text, path);
}

/** Parses and validates mapping YAML; throws MappingError listing every problem. */
export function parseMapping(text: string, sourceName = "mapping.yaml"): Mapping {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const locate = new Locator(doc, lines, sourceName);

  const syntax: MappingProblem[] = [...doc.errors, ...doc.warnings].map((e) =>
    locate.at(e.pos[0], `YAML: ${e.message.split("\n")[0]} (check indentation and quoting here)`),
  );
  if (syntax.length) throw new MappingError(syntax);

  const data: unknown = doc.toJS();
  if (data === null || data === undefined) {
    throw new MappingError([
      locate.at(0, "the mapping file is empty: it needs at least `department: { default: ... }` and `rules: [...]`"),
    ]);
  }
  // Vocabulary and semantic checks run even when the schema fails, so one run lists everything.
  const parsed = mappingFileSchema.safeParse(data);
  const vocabulary = resolveVocabulary(parsed.success ? parsed.data : looseVocabulary(data));
  const problems = [
    ...(parsed.success ? [] : parsed.error.issues.flatMap((issue) => zodIssueToProblems(issue, locate, data))),
    ...checkMappingSemantics(data, vocabulary, locate),
  ];
  if (problems.length || !parsed.success) throw new MappingError(sortProblems(problems));
  const file = parsed.data;

  return {
    source: sourceName,
    department: { ...file.department },
    rules: file.rules.map((rule, index) => compileRule(rule, index, locate.lineOf(["rules", index]))),
    vocabulary,
    hash: mappingHash(file),
  };
}

/** The vocabulary section when it is well-formed on its own, so permission checks can run beside schema errors. */
function looseVocabulary(data: unknown): Pick<MappingFile, "vocabulary"> {
  const parsed = vocabularySchema.safeParse((data as { vocabulary?: unknown } | null)?.vocabulary);
  return { vocabulary: parsed.success ? parsed.data : undefined };
}

function resolveVocabulary(file: Pick<MappingFile, "vocabulary">): MappingVocabulary | null {
  const v = file.vocabulary;
  if (v && !v.enabled) return null;
  return {
    companyPermissions: v?.companyPermissions ?? DEFAULT_VOCABULARY.companyPermissions,
    workspacePermissions: v?.workspacePermissions ?? DEFAULT_VOCABULARY.workspacePermissions,
    teamPermissions: v?.teamPermissions ?? DEFAULT_VOCABULARY.teamPermissions,
  };
}

function compileRule(rule: MappingFile["rules"][number], index: number, line: number): MappingRule {
  return {
    index,
    line,
    ...(rule.description !== undefined ? { description: rule.description } : {}),
    groups: [...(rule.group !== undefined ? [rule.group] : []), ...(rule.groups ?? [])],
    ...(rule.groupExternalId !== undefined ? { groupExternalId: rule.groupExternalId } : {}),
    ...(rule.groupPattern !== undefined ? { groupPattern: new RegExp(rule.groupPattern, "i") } : {}),
    ...(rule.department !== undefined ? { department: rule.department } : {}),
    companyPermissions: rule.companyPermissions,
    workspaces: rule.workspaces.map((ws) => ({
      name: ws.name,
      permissions: ws.permissions,
      permissionSets: ws.permissionSets,
      teams: ws.teams.map((t) => ({ name: t.name, permissions: t.permissions })),
    })),
  };
}

/**
 * A digest of what the file means: canonical JSON (sorted keys) of the validated content, so
 * comments, formatting and key order do not count as a change. Accepts the parsed file or a
 * Mapping (whose `hash` is this value).
 */
export function mappingHash(input: MappingFile | Mapping): string {
  if ("hash" in input && typeof input.hash === "string") return input.hash;
  return createHash("sha256").update(canonicalJson(input)).digest("hex").slice(0, 32);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

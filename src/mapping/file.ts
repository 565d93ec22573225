import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { checkMappingSemantics, sortProblems, zodIssueToProblems } from "./checks.js";
import { compileGroupPattern } from "./groupPattern.js";
import { Locator, MappingError, type MappingProblem } from "./problems.js";
import { API_IDENTIFIER, ID_KEY_PREFIX, legacyStringsOf, legacyWarnings } from "./granular.js";
import { defaultVocabulary, type MappingVocabulary, type PermissionModel } from "../vocabulary/permissions.js";
import { catalogueSchema, checkCatalogue, compileCatalogue } from "./catalogue.js";
import type { Mapping, MappingRule } from "./compiled.js";

export { MappingError } from "./problems.js";
/**
 * The mapping file (`MAPPING_FILE`): which IdP groups give which dashboard permissions.
 * Read once at boot and on reload, validated strictly (unknown keys, bad regular expressions,
 * permission names outside the vocabulary, departments outside `allowed`), every problem
 * reported with its line and the fix. `config/mapping.example.yaml` documents the format.
 */

const name = z.string().trim().min(1);
const nameList = z.array(name);

/** The platform's API identifiers (UUIDs); names can change on the platform, identifiers do not. */
const identifier = z.string().trim().regex(API_IDENTIFIER, "must be an API identifier (a UUID)");

/** Something the platform names and identifies: by `name`, by `id`, or both (the id is what is sent). */
const named = { name: name.optional(), id: identifier.optional() };
const eitherNameOrId = (v: { name?: string | undefined; id?: string | undefined }) =>
  v.name !== undefined || v.id !== undefined;
const NAME_OR_ID = { message: "give `name:` or `id:` (or both)" };

/** A role or a permission set: its name, or `{ name, id }`. */
const reference = z.union([name, z.strictObject(named).refine(eitherNameOrId, NAME_OR_ID)]);

const teamSchema = z
  .strictObject({
    ...named,
    permissions: nameList.default([]),
  })
  .refine(eitherNameOrId, NAME_OR_ID);

const workspaceSchema = z
  .strictObject({
    ...named,
    permissions: nameList.default([]),
    permissionSets: z.array(reference).default([]),
    teams: z.array(teamSchema).default([]),
  })
  .refine(eitherNameOrId, NAME_OR_ID);

const ruleSchema = z.strictObject({
  /** Shown in the admin UI beside the rule; no effect on matching. */
  description: z.string().optional(),
  group: name.optional(),
  groups: nameList.optional(),
  groupExternalId: name.optional(),
  groupPattern: name.optional(),
  department: name.optional(),
  companyPermissions: nameList.default([]),
  /** Company-level roles (granular model). */
  roles: z.array(reference).default([]),
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
  /**
   * The granular SCIM strings of what the platform publishes by display name only ("Approve
   * Campaigns"), or of a legacy string outside its table (`publish_cards`): the operator's word,
   * never a guess. An empty list drops it on purpose.
   */
  equivalents: z.record(z.string(), z.union([name, nameList])).default({}),
});

const mappingFileSchema = z.strictObject({
  /**
   * Set by templates (the Kubernetes base's ConfigMap, the demo mapping): what to do instead.
   * Loads anywhere but in production, which refuses the file wherever it lives (service.ts).
   */
  placeholder: z.string().min(1).optional(),
  /** Which of the platform's permission models the rules speak; inferred from the strings when absent. */
  permissionModel: z.enum(["legacy", "granular"]).optional(),
  department: departmentSchema,
  rules: z.array(ruleSchema),
  vocabulary: vocabularySchema.optional(),
  /** Access the IdP assigns directly, as roles or entitlements (src/mapping/catalogue.ts). */
  catalogue: catalogueSchema(name, reference).optional(),
});

export type MappingFile = z.infer<typeof mappingFileSchema>;

/** The key of something named by `name` and/or `id`: the identifier wins. */
function refKey(ref: string | { name?: string | undefined; id?: string | undefined }): string {
  if (typeof ref === "string") return ref;
  return ref.id !== undefined ? `${ID_KEY_PREFIX}${ref.id.toLowerCase()}` : ref.name!;
}

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
  const model = permissionModelOf(data);
  const vocabulary = resolveVocabulary(parsed.success ? parsed.data : looseVocabulary(data), model);
  const problems = [
    ...(parsed.success ? [] : parsed.error.issues.flatMap((issue) => zodIssueToProblems(issue, locate, data))),
    ...checkMappingSemantics(data, vocabulary, locate, model),
    ...checkCatalogue(data, locate),
  ];
  if (problems.length || !parsed.success) throw new MappingError(sortProblems(problems));
  const file = parsed.data;
  const equivalents = file.vocabulary?.equivalents ?? {};

  return {
    source: sourceName,
    department: { ...file.department },
    rules: file.rules.map((rule, index) =>
      compileRule(rule, index, locate.lineOf(["rules", index]), locate.problem(["rules", index, "groupPattern"], "")),
    ),
    catalogue: compileCatalogue(
      file.catalogue,
      file.rules.length,
      (i) => locate.lineOf(["catalogue", "entries", i]),
      refKey,
    ),
    vocabulary,
    permissionModel: model,
    equivalents,
    warnings: model === "legacy" ? legacyWarnings(data, equivalents, locate) : [],
    ...(file.placeholder ? { placeholder: { note: file.placeholder, line: locate.lineOf(["placeholder"]) } } : {}),
    hash: mappingHash(file),
  };
}

/** Declared, else legacy when any rule uses a legacy-only string, else granular. */
function permissionModelOf(data: unknown): PermissionModel {
  const declared = (data as { permissionModel?: unknown } | null)?.permissionModel;
  if (declared === "legacy" || declared === "granular") return declared;
  return legacyStringsOf(data).length ? "legacy" : "granular";
}

/** The vocabulary section when it is well-formed on its own, so permission checks can run beside schema errors. */
function looseVocabulary(data: unknown): Pick<MappingFile, "vocabulary"> {
  const parsed = vocabularySchema.safeParse((data as { vocabulary?: unknown } | null)?.vocabulary);
  return { vocabulary: parsed.success ? parsed.data : undefined };
}

/** The file's lists, else the model's; the operator's equivalents are granular strings too. */
function resolveVocabulary(file: Pick<MappingFile, "vocabulary">, model: PermissionModel): MappingVocabulary | null {
  const v = file.vocabulary;
  if (v && !v.enabled) return null;
  const defaults = defaultVocabulary(model);
  const declared = Object.values(v?.equivalents ?? {}).flat();
  return {
    companyPermissions: v?.companyPermissions ?? defaults.companyPermissions,
    workspacePermissions: v?.workspacePermissions ?? [...defaults.workspacePermissions, ...declared],
    teamPermissions: v?.teamPermissions ?? [...defaults.teamPermissions, ...declared],
  };
}

function compileRule(
  rule: MappingFile["rules"][number],
  index: number,
  line: number,
  patternAt: MappingProblem,
): MappingRule {
  return {
    index,
    line,
    ...(rule.description !== undefined ? { description: rule.description } : {}),
    groups: [...(rule.group !== undefined ? [rule.group] : []), ...(rule.groups ?? [])],
    ...(rule.groupExternalId !== undefined ? { groupExternalId: rule.groupExternalId } : {}),
    ...(rule.groupPattern !== undefined ? { groupPattern: compileGroupPattern(rule.groupPattern, patternAt) } : {}),
    ...(rule.department !== undefined ? { department: rule.department } : {}),
    companyPermissions: rule.companyPermissions,
    roles: rule.roles.map(refKey),
    workspaces: rule.workspaces.map((ws) => ({
      name: refKey(ws),
      permissions: ws.permissions,
      permissionSets: ws.permissionSets.map(refKey),
      teams: ws.teams.map((t) => ({ name: refKey(t), permissions: t.permissions })),
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

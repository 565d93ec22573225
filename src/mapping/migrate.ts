import { isMap, isScalar, isSeq, Pair, Scalar, type YAMLMap, type YAMLSeq } from "yaml";
import {
  GRANULAR_TEAM_PERMISSIONS,
  GRANULAR_WORKSPACE_PERMISSIONS,
  LEGACY_TO_GRANULAR,
} from "../vocabulary/permissions.js";
import {
  isStringScalar,
  MappingDocument,
  type Commentable,
  type Place,
  type WorkspaceEntry,
} from "./mappingDocument.js";
import { pinIdentifiers, type LearnedIdentifier, type PinOutcome } from "./pinIdentifiers.js";

export type { LearnedIdentifier } from "./pinIdentifiers.js";

/**
 * `scim-connector mapping migrate`: a legacy mapping file rewritten in the platform's granular
 * model with its published table (src/vocabulary/permissions.ts). Text in, text and report out; the
 * file's comments, key order and layout are kept (the yaml Document is edited in place). What the
 * table names by display name only comes from the file's `vocabulary.equivalents`, never a guess:
 * anything missing there, or a workspace the granular model cannot express, stops the migration.
 * Words for the report and the stop: ./migrateReport.ts.
 *
 * Past ~300 lines: one pass over the yaml Document, edited in place; its words are apart.
 */

/** One legacy string and what it became. */
export type Translation = {
  legacy: string;
  /** Its granular strings, before de-duplication against the rest of the list. */
  granular: string[];
  /** Display names (or table-less legacy strings) answered by `vocabulary.equivalents`. */
  fromEquivalents: string[];
  /** Those of them that `vocabulary.equivalents` drops on purpose (`[]`). */
  dropped: string[];
};

/** One permission list: `scope` is the rule or `vocabulary`, `where` the workspace, team or vocabulary list. */
type TranslatedList = Place & {
  translations: Translation[];
  /** Strings that are not legacy ones, kept as given. */
  kept: string[];
  /** Duplicates removed (the first occurrence wins). */
  merged: number;
  /** How many strings the list holds now. */
  count: number;
};

type MigrationReport = { rules: number; lists: TranslatedList[]; pins: PinOutcome[]; warnings: string[] };

/** The file in the granular model; `alreadyGranular`: its permissions were left alone (identifiers may be pinned). */
export type MigratedMapping = { outcome: "migrated" | "alreadyGranular"; text: string; report: MigrationReport };
/** Nothing to write: what stands in the way, and the `vocabulary.equivalents` YAML that answers the display names. */
export type MigrationStopped = { outcome: "stopped"; problems: string[]; equivalentsToAdd: string | null };
export type MigrationResult = MigratedMapping | MigrationStopped;

/** `identifiers`: pin them (`--pin-ids`). */
export type MigrationOptions = { identifiers?: readonly LearnedIdentifier[] };

/** A flow list longer than this on one line is written as a block list instead. */
const MAX_FLOW_LINE = 100;
const MODEL_COMMENT =
  " The rules below use the platform's granular permission strings (`scim-connector mapping migrate`).";

type Unresolved = { key: string; display: boolean; legacy: Set<string>; uses: string[]; unanswered: boolean };
type Walk = {
  file: MappingDocument;
  /** `vocabulary.equivalents`; null: the entry is there without a value yet. */
  equivalents: Map<string, string[] | null>;
  problems: string[];
  unresolved: Map<string, Unresolved>;
  report: MigrationReport;
  seen: Set<unknown>;
};

export function migrateMapping(text: string, options: MigrationOptions = {}): MigrationResult {
  const file = new MappingDocument(text);
  const root = file.root;
  if (!root) return { outcome: "stopped", problems: [file.error!], equivalentsToAdd: null };
  const { rules, workspaces } = file.entries();
  const report: MigrationReport = { rules: rules.length, lists: [], pins: [], warnings: [] };
  const walk: Walk = { file, equivalents: new Map(), problems: [], unresolved: new Map(), report, seen: new Set() };
  const model = root.get("permissionModel");
  if (model === "granular") {
    if (!options.identifiers) return { outcome: "alreadyGranular", text, report };
    report.pins = pinIdentifiers(file, options.identifiers);
    return { outcome: "alreadyGranular", text: file.render(), report };
  }
  if (model !== undefined && model !== "legacy") {
    const line = file.lineOf(root.get("permissionModel", true));
    return {
      outcome: "stopped",
      problems: [`line ${line}: permissionModel must be legacy or granular`],
      equivalentsToAdd: null,
    };
  }

  readEquivalents(walk, root);
  for (const ws of workspaces) {
    checkExpressible(walk, ws);
    const permissions = file.seqIn(ws.map, "permissions");
    if (permissions) translateSeq(walk, permissions, "workspace", ws.place, ws.flowAround);
    for (const team of ws.teams) {
      const teamPermissions = file.seqIn(team.map, "permissions");
      if (teamPermissions) translateSeq(walk, teamPermissions, "team", team.place, team.flowAround);
    }
  }
  translateVocabulary(walk, root);
  if (walk.problems.length || walk.unresolved.size) {
    const unresolved = [...walk.unresolved.values()];
    return {
      outcome: "stopped",
      problems: [...walk.problems, ...unresolved.map(describeUnresolved)],
      equivalentsToAdd: unresolved.length ? equivalentsYaml(unresolved) : null,
    };
  }
  if (options.identifiers) report.pins = pinIdentifiers(file, options.identifiers);
  markGranular(root);
  return { outcome: "migrated", text: file.render(), report };
}

function readEquivalents(walk: Walk, root: YAMLMap): void {
  const vocabulary = walk.file.mapIn(root, "vocabulary");
  const node = vocabulary && walk.file.deref(vocabulary.get("equivalents", true));
  if (node === undefined || node === null) return;
  if (!isMap(node)) {
    walk.problems.push(
      `line ${walk.file.lineOf(node)}: vocabulary.equivalents must be a map (name: SCIM string or list)`,
    );
    return;
  }
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    const value = walk.file.deref(pair.value);
    const strings = (items: unknown[]) => (items.every(isStringScalar) ? items.map((i) => i.value) : undefined);
    const answer =
      value === null || (isScalar(value) && value.value === null)
        ? null
        : isScalar(value)
          ? strings([value])
          : isSeq(value)
            ? strings(value.items)
            : undefined;
    if (answer === undefined)
      walk.problems.push(
        `line ${walk.file.lineOf(pair.key)}: vocabulary.equivalents "${key}" must be a SCIM string or a list of them ([] drops it on purpose)`,
      );
    else walk.equivalents.set(key, answer);
  }
  const known = new Set(
    Object.entries(LEGACY_TO_GRANULAR).flatMap(([legacy, equivalents]) =>
      equivalents === null ? [legacy] : equivalents.flatMap((e) => ("display" in e ? [e.display] : [])),
    ),
  );
  for (const key of walk.equivalents.keys())
    if (!known.has(key))
      walk.report.warnings.push(
        `vocabulary.equivalents "${key}" is neither a display name of the published table nor a legacy string outside it; nothing uses it`,
      );
}

/** A workspace the granular model cannot express (permissions OR one set) stops the migration. */
function checkExpressible(walk: Walk, ws: WorkspaceEntry): void {
  const at = `${ws.place.scope}, ${ws.place.where} (line ${ws.place.line})`;
  const sets = walk.file.seqIn(ws.map, "permissionSets")?.items ?? [];
  if (sets.length && walk.file.seqIn(ws.map, "permissions")?.items.length)
    walk.problems.push(
      `${at}: has both permissions and a permission set; the granular model gives a workspace permissions OR one set. ` +
        "Fix: drop `permissionSets:` and list what the set grants under `permissions:`, or drop `permissions:` and name a set (defined on the platform) that includes them",
    );
  if (sets.length > 1)
    walk.problems.push(
      `${at}: names ${sets.length} permission sets; the granular model gives a workspace one set at most. ` +
        "Fix: keep one, or define on the platform one set that combines them and name it here",
    );
}

function translateVocabulary(walk: Walk, root: YAMLMap): void {
  const vocabulary = walk.file.mapIn(root, "vocabulary");
  if (!vocabulary) return;
  for (const [key, level] of [
    ["workspacePermissions", "workspace"],
    ["teamPermissions", "team"],
  ] as const) {
    const seq = walk.file.seqIn(vocabulary, key);
    const place = { scope: "vocabulary", where: `vocabulary.${key}`, line: walk.file.lineOf(seq) };
    if (seq) translateSeq(walk, seq, level, place, !!vocabulary.flow || !!root.flow, false);
  }
}

/** The granular strings of one string of a legacy file, or null when it is not a legacy string. */
function granularOf(walk: Walk, legacy: string, use: string): Translation | null {
  if (!Object.hasOwn(LEGACY_TO_GRANULAR, legacy)) return null;
  const translation: Translation = { legacy, granular: [], fromEquivalents: [], dropped: [] };
  const answer = (key: string, display: boolean) => {
    const strings = walk.equivalents.get(key);
    if (strings === undefined || strings === null) {
      const entry = walk.unresolved.get(key) ?? { key, display, legacy: new Set(), uses: [], unanswered: false };
      entry.legacy.add(legacy);
      entry.unanswered ||= strings === null;
      if (!entry.uses.includes(use)) entry.uses.push(use);
      walk.unresolved.set(key, entry);
      return;
    }
    translation.fromEquivalents.push(key);
    if (!strings.length) translation.dropped.push(key);
    translation.granular.push(...strings);
  };
  const equivalents = LEGACY_TO_GRANULAR[legacy];
  if (!equivalents) answer(legacy, false);
  else for (const e of equivalents) "scim" in e ? translation.granular.push(e.scim) : answer(e.display, true);
  return translation;
}

function translateSeq(
  walk: Walk,
  seq: YAMLSeq,
  level: "workspace" | "team",
  place: Place,
  flowAround: boolean,
  warn = true,
): void {
  if (walk.seen.has(seq)) return; // an alias to a list already migrated
  walk.seen.add(seq);
  const list: TranslatedList = { ...place, translations: [], kept: [], merged: 0, count: 0 };
  const written = new Set<string>();
  const fromEquivalents = new Set<string>();
  const items: unknown[] = [];
  let pending: string | undefined; // comments of an item that became nothing
  for (const raw of seq.items) {
    const item = walk.file.deref(raw);
    if (!isStringScalar(item)) {
      items.push(raw); // not a string: `mapping check` names it
      continue;
    }
    const use = `${place.scope}, ${place.where}, line ${walk.file.lineOf(item)}`;
    const translation = granularOf(walk, item.value, use);
    if (translation) list.translations.push(translation);
    else list.kept.push(item.value);
    const strings = translation?.granular ?? [item.value];
    if (translation?.fromEquivalents.length) for (const s of strings) fromEquivalents.add(s);
    const fresh: string[] = [];
    for (const s of strings) {
      if (written.has(s)) continue;
      written.add(s);
      fresh.push(s);
    }
    list.merged += strings.length - fresh.length;
    const nodes = fresh.length === 1 && fresh[0] === item.value ? [item] : fresh.map((s) => new Scalar(s) as Scalar);
    if (!nodes.length) {
      pending = [pending, item.commentBefore, item.comment].filter(Boolean).join("\n") || undefined;
      continue;
    }
    if (nodes[0] !== item) {
      nodes[0]!.commentBefore = item.commentBefore;
      nodes[0]!.spaceBefore = item.spaceBefore;
      nodes[nodes.length - 1]!.comment = item.comment;
    }
    if (pending) nodes[0]!.commentBefore = [pending, nodes[0]!.commentBefore].filter(Boolean).join("\n");
    pending = undefined;
    items.push(...nodes);
  }
  if (pending) seq.comment = [pending, seq.comment].filter(Boolean).join("\n");
  list.count = written.size;
  const before = seq.items.map((i) => (isScalar(i) ? i.value : i));
  const changed = items.length !== before.length || items.some((i, n) => (isScalar(i) ? i.value : i) !== before[n]);
  if (changed) {
    seq.items = items;
    if (seq.flow && !flowAround && flowWidth(walk, seq) > MAX_FLOW_LINE) seq.flow = false;
  }
  walk.report.lists.push(list);
  const published = level === "team" ? GRANULAR_TEAM_PERMISSIONS : GRANULAR_WORKSPACE_PERMISSIONS;
  const unpublished = [...written].filter((s) => !published.includes(s) && !fromEquivalents.has(s));
  if (warn && unpublished.length)
    walk.report.warnings.push(
      `${place.scope}, ${place.where} (line ${place.line}): ${unpublished.join(", ")} ${unpublished.length === 1 ? "is" : "are"} not ` +
        `among the platform's published granular ${level} strings; \`mapping check\` will say whether the vocabulary accepts ${unpublished.length === 1 ? "it" : "them"}`,
    );
}

/** The column a flow list ends at when written on one line where it starts. */
function flowWidth(walk: Walk, seq: YAMLSeq): number {
  const column = seq.range ? walk.file.lines.linePos(seq.range[0]).col - 1 : 0;
  const items = seq.items.map((i) => (isScalar(i) ? String(i.value) : "{…}"));
  return column + `[${items.join(", ")}]`.length + (seq.comment ? seq.comment.length + 2 : 0);
}

function markGranular(root: YAMLMap): void {
  const declared = root.items.find((pair) => isScalar(pair.key) && pair.key.value === "permissionModel");
  if (declared) {
    if (isScalar(declared.value)) declared.value.value = "granular";
    else declared.value = new Scalar("granular");
    return;
  }
  const key = new Scalar("permissionModel");
  const department = root.items.findIndex((pair) => isScalar(pair.key) && pair.key.value === "department");
  if (!root.flow) {
    // A paragraph of its own: blank lines before and after, the department's trailing one moved here.
    key.commentBefore = MODEL_COMMENT;
    key.spaceBefore = department >= 0;
    const block = root.items[department]?.value as { comment?: string | null } | undefined;
    if (block?.comment) block.comment = block.comment.replace(/\n+$/, "");
    const next = root.items[department + 1]?.key as Commentable | undefined;
    if (next) next.spaceBefore = true;
  }
  root.items.splice(department + 1, 0, new Pair(key, new Scalar("granular")));
}

/** What stops the migration, in words. */
function describeUnresolved(u: Unresolved): string {
  const what = u.display
    ? `"${u.key}" (published by display name only, no SCIM string; from ${[...u.legacy].join(", ")})`
    : `${u.key} (not in the published table)`;
  const state = u.unanswered
    ? "has an entry in vocabulary.equivalents without a value"
    : "has no entry in vocabulary.equivalents";
  return `${what} ${state}; used by ${u.uses.join("; ")}`;
}

function equivalentsYaml(unresolved: Unresolved[]): string {
  const entries = unresolved.map(
    (u) =>
      `    ${JSON.stringify(u.key)}: # ${u.display ? `from ${[...u.legacy].join(", ")}` : "legacy, not in the published table"}`,
  );
  return ["vocabulary:", "  equivalents:", ...entries].join("\n");
}

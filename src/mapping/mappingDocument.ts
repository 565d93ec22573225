import {
  isAlias,
  isCollection,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  visit,
  type Document,
  type Scalar,
  type YAMLMap,
  type YAMLSeq,
} from "yaml";

/**
 * A mapping file as an editable YAML document, for the tools that rewrite it (`mapping migrate`):
 * its rules, workspaces and teams with their lines, and the file printed back with its comments,
 * indentation, list style and line ends. The yaml package keeps comments and key order; what it
 * would move is put back here (see `reattachOuterComments`).
 */

/** Where something sits, for reports: `rule "Marketing" (line 53)`, `workspace EU, team Lifecycle`. */
export type Place = { scope: string; where: string; line: number };
/** `flowAround`: inside a flow collection (`{ … }`, `[ … ]`), where a block list cannot be written. */
export type Entry = { map: YAMLMap; place: Place; flowAround: boolean };
export type WorkspaceEntry = Entry & { teams: Entry[] };

/** Something the yaml package prints comments and blank lines before. */
export type Commentable = { commentBefore?: string | null | undefined; spaceBefore?: boolean | undefined };

export class MappingDocument {
  readonly doc: Document;
  readonly lines = new LineCounter();
  /** The top-level map; undefined when the file is not one (`error` says why). */
  readonly root: YAMLMap | undefined;
  readonly error: string | undefined;

  constructor(readonly text: string) {
    this.doc = parseDocument(text, { lineCounter: this.lines, prettyErrors: false, uniqueKeys: true });
    const [error] = this.doc.errors;
    const root: unknown = this.doc.contents;
    this.root = !error && isMap(root) ? root : undefined;
    this.error = error
      ? `line ${this.lines.linePos(error.pos[0]).line}: not valid YAML (${error.message.split("\n")[0]}); \`scim-connector mapping check FILE\` names the fix`
      : this.root
        ? undefined
        : "the file is not a mapping file (it needs `department:` and `rules:`)";
    if (this.root) reattachOuterComments(this.doc, text, this.lines);
  }

  deref(node: unknown): unknown {
    return isAlias(node) ? node.resolve(this.doc) : node;
  }

  lineOf(node: unknown): number {
    const range = (node as { range?: [number, number, number] } | null)?.range;
    return this.lines.linePos(range?.[0] ?? 0).line;
  }

  seqIn(map: YAMLMap, key: string): YAMLSeq | undefined {
    const node = this.deref(map.get(key, true));
    return isSeq(node) ? node : undefined;
  }

  mapIn(map: YAMLMap, key: string): YAMLMap | undefined {
    const node = this.deref(map.get(key, true));
    return isMap(node) ? node : undefined;
  }

  /** The rules, and every workspace entry of every rule with its teams, in file order. */
  entries(): { rules: Entry[]; workspaces: WorkspaceEntry[] } {
    const rulesSeq = this.root && this.seqIn(this.root, "rules");
    const rules = this.mapsIn(rulesSeq).map((map): Entry => {
      const line = this.lineOf(map);
      return {
        map,
        place: { scope: ruleScope(map, line), where: "", line },
        flowAround: !!rulesSeq?.flow || !!map.flow,
      };
    });
    const workspaces = rules.flatMap((rule) => {
      const seq = this.seqIn(rule.map, "workspaces");
      return this.mapsIn(seq).map((map): WorkspaceEntry => {
        const where = `workspace ${refText(map)}`;
        const flowAround = rule.flowAround || !!seq?.flow || !!map.flow;
        const teamsSeq = this.seqIn(map, "teams");
        const teams = this.mapsIn(teamsSeq).map((team): Entry => ({
          map: team,
          place: { scope: rule.place.scope, where: `${where}, team ${refText(team)}`, line: this.lineOf(team) },
          flowAround: flowAround || !!teamsSeq?.flow || !!team.flow,
        }));
        return { map, place: { scope: rule.place.scope, where, line: this.lineOf(map) }, flowAround, teams };
      });
    });
    return { rules, workspaces };
  }

  /** The edited document in the source's indentation, list style, flow padding and line ends. */
  render(): string {
    let indent = 2;
    let indentSeq = true;
    for (const pair of this.root?.items ?? []) {
      const keyColumn = this.lines.linePos((pair.key as Scalar).range?.[0] ?? 0).col;
      const value = pair.value as (YAMLMap | YAMLSeq | null) & { range?: [number, number, number] };
      if (!value?.range || value.flow) continue;
      if (isSeq(value)) indentSeq = this.lines.linePos(value.range[0]).col > keyColumn;
      const firstKey = isMap(value) ? (value.items[0]?.key as Scalar | undefined)?.range?.[0] : undefined;
      if (firstKey !== undefined) indent = this.lines.linePos(firstKey).col - keyColumn;
    }
    const padded = /[[{] \S/.test(this.text.replace(/#.*$/gm, ""));
    const out = this.doc.toString({ indent, indentSeq, lineWidth: 0, flowCollectionPadding: padded });
    return this.text.includes("\r\n") ? out.replace(/\n/g, "\r\n") : out;
  }

  private mapsIn(seq: YAMLSeq | undefined): YAMLMap[] {
    return (seq?.items ?? []).map((item) => this.deref(item)).filter((item) => isMap(item));
  }
}

export function stringIn(map: YAMLMap, key: string): string | undefined {
  const value = map.get(key);
  return typeof value === "string" ? value : undefined;
}

function refText(map: YAMLMap): string {
  return stringIn(map, "name") ?? `id ${stringIn(map, "id") ?? "?"}`;
}

/** A rule in words: its description, else what it matches, and its line. */
function ruleScope(rule: YAMLMap, line: number): string {
  const groups = rule.get("groups");
  const matcher = (key: string, word: string) =>
    stringIn(rule, key) !== undefined ? `${word} ${stringIn(rule, key)}` : undefined;
  const label =
    stringIn(rule, "description") ??
    matcher("group", "group") ??
    (isSeq(groups) ? `groups ${groups.items.map(String).join(", ")}` : undefined) ??
    matcher("groupExternalId", "externalId") ??
    matcher("groupPattern", "pattern") ??
    "(no group)";
  return `rule "${label}" (line ${line})`;
}

/**
 * The yaml package hangs a comment that follows a nested block on that block even when the
 * comment sits further left (it introduces what comes next), and would print it indented, above
 * the wrong key. Such lines go back to the node that follows. It also prints the document's
 * closing comment after a blank line; that one stays unspaced when it was.
 */
function reattachOuterComments(doc: Document, text: string, lines: LineCounter): void {
  const root = doc.contents as YAMLMap;
  if (doc.comment && !root.flow && !/\n[ \t]*\r?\n(?:[ \t]*#.*\r?\n?)+\s*$/.test(text)) {
    root.comment = [root.comment, doc.comment].filter(Boolean).join("\n");
    doc.comment = "";
  }
  visit(doc, {
    Collection(_key, node, path) {
      if (node.flow || !node.comment || !node.range) return;
      const first = isMap(node) ? (node.items[0]?.key as Scalar | undefined)?.range?.[0] : node.range[0];
      if (first === undefined) return;
      const own = lines.linePos(first).col - 1;
      const source = text.slice(node.range[1], node.range[2]).split(/\r?\n/);
      const split = source.findIndex((l) => /^\s*#/.test(l) && l.search(/\S/) < own);
      if (split < 0) return;
      const asComment = (ls: string[]) => ls.map((l) => l.trim().replace(/^#/, "")).join("\n");
      node.comment = asComment(source.slice(0, split)).replace(/\n+$/, "") || undefined;
      const moved = source.slice(split);
      while (moved.length && !moved[moved.length - 1]!.trim()) moved.pop();
      const blankBefore = split > 0 && !source[split - 1]!.trim();
      const target = nextNode(path, node);
      if (!target) {
        // Nothing follows: the comment ends the document.
        root.comment = [...(blankBefore ? [""] : []), asComment(moved), ...(root.comment ? [root.comment] : [])].join(
          "\n",
        );
        return;
      }
      target.commentBefore = [
        asComment(moved),
        ...(target.spaceBefore ? [""] : []),
        ...(target.commentBefore ? [target.commentBefore] : []),
      ].join("\n");
      target.spaceBefore = blankBefore;
    },
  });
}

/** The node printed next after `node` (the following key or item of it or of an ancestor). */
function nextNode(path: readonly unknown[], node: unknown): Commentable | undefined {
  let child = node;
  for (let i = path.length - 1; i >= 0; i--) {
    const parent = path[i];
    if (isPair(parent)) {
      child = parent;
      continue;
    }
    if (!isCollection(parent)) return undefined;
    const items = parent.items as unknown[];
    const index = items.indexOf(child);
    const next = items[index + 1];
    if (index >= 0 && next !== undefined) return (isPair(next) ? next.key : next) as Commentable;
    child = parent;
  }
  return undefined;
}

/** True when `node` is a string scalar. */
export function isStringScalar(node: unknown): node is Scalar<string> {
  return isScalar(node) && typeof node.value === "string";
}

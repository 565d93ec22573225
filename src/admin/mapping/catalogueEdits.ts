import type { Queryable } from "../../db/database.js";
import { latestCatalogueEdits, type CatalogueEditKind } from "../../db/platform/catalogueEditRepository.js";
import type { Mapping } from "../../mapping/compiled.js";
import { ID_KEY_PREFIX } from "../../mapping/granular.js";

/**
 * The custom roles, permission sets and teams the mapping names that were edited in the platform's
 * dashboard, as its record says (docs/platform-record.md). The connector cannot read a role's
 * definition: it can say that it changed, when and by whom, so an admin checks that the mapping
 * still means what it meant.
 */
export type CatalogueEditInUse = {
  kind: CatalogueEditKind;
  name: string;
  /** Where the mapping names it: "line 12", "lines 12, 40". */
  lines: number[];
  event: string;
  at: Date;
  actor: string;
  /** "role "Auditor" (line 40): Updated Custom Role in the platform's dashboard by … at …". */
  words: string;
};

const NOUN: Record<CatalogueEditKind, string> = { role: "role", "permission-set": "permission set", team: "team" };

/** Each role, permission set and team a rule or catalogue entry names by name (id-pinned ones are left out). */
function catalogueNamesInUse(
  mapping: Mapping,
): Map<string, { kind: CatalogueEditKind; name: string; lines: number[] }> {
  const used = new Map<string, { kind: CatalogueEditKind; name: string; lines: number[] }>();
  const use = (kind: CatalogueEditKind, name: string, line: number) => {
    if (name.startsWith(ID_KEY_PREFIX)) return;
    const key = `${kind}:${name.toLowerCase()}`;
    const found = used.get(key) ?? { kind, name, lines: [] };
    if (!found.lines.includes(line)) found.lines.push(line);
    used.set(key, found);
  };
  for (const rule of [...mapping.rules, ...mapping.catalogue.entries.map((e) => ({ ...e.rule, line: e.line }))]) {
    for (const role of rule.roles ?? []) use("role", role, rule.line);
    for (const ws of rule.workspaces) {
      for (const set of ws.permissionSets) use("permission-set", set, rule.line);
      for (const team of ws.teams) use("team", team.name, rule.line);
    }
  }
  return used;
}

export async function catalogueEditsInUse(db: Queryable, mapping: Mapping): Promise<CatalogueEditInUse[]> {
  const used = catalogueNamesInUse(mapping);
  const edits = await latestCatalogueEdits(db, [...used.values()]);
  return edits.flatMap((edit) => {
    const use = used.get(`${edit.kind}:${(edit.name ?? "").toLowerCase()}`);
    if (!use) return [];
    const lines = `line${use.lines.length > 1 ? "s" : ""} ${use.lines.join(", ")}`;
    return [
      {
        kind: edit.kind,
        name: use.name,
        lines: use.lines,
        event: edit.event,
        at: edit.at,
        actor: edit.actor,
        words: `${NOUN[edit.kind]} "${use.name}" (${lines}): ${edit.event} in the platform's dashboard by ${edit.actor} at ${edit.at.toISOString()}`,
      },
    ];
  });
}

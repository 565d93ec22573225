import { isMap, isScalar, Pair, Scalar, YAMLMap, type YAMLSeq } from "yaml";
import { isStringScalar, stringIn, type MappingDocument } from "./mappingDocument.js";

/**
 * `mapping migrate --pin-ids`: the API identifier the connector has learned for a workspace, team,
 * permission set or role is written beside its name (`id:`), so the file survives a rename on the
 * platform. A name with no identifier, or several, is left as it is and said so.
 */

/** An API identifier the connector learned from the platform (src/db/platform/identifierRepository.ts). */
export type LearnedIdentifier = {
  kind: "workspace" | "team" | "role" | "permissionSet";
  id: string;
  name: string;
  /** The team's workspace; null for the other kinds. */
  workspaceId: string | null;
};

export type PinOutcome = {
  kind: LearnedIdentifier["kind"];
  name: string;
  where: string;
  line: number;
  /** null: not pinned, `reason` says why. */
  id: string | null;
  reason?: string;
};

type Kind = LearnedIdentifier["kind"];

export function pinIdentifiers(file: MappingDocument, identifiers: readonly LearnedIdentifier[]): PinOutcome[] {
  const outcomes: PinOutcome[] = [];
  const keyOf = (kind: Kind, name: string, workspaceId: string | null) =>
    `${kind}\u0000${workspaceId?.toLowerCase() ?? ""}\u0000${name}`;
  const learned = new Map<string, Set<string>>();
  for (const i of identifiers) {
    const key = keyOf(i.kind, i.name, i.kind === "team" ? i.workspaceId : null);
    learned.set(key, (learned.get(key) ?? new Set()).add(i.id));
  }

  const lookup = (kind: Kind, name: string, where: string, line: number, workspaceId: string | null) => {
    const ids = [...(learned.get(keyOf(kind, name, workspaceId)) ?? [])];
    const outcome: PinOutcome = { kind, name, where, line, id: ids.length === 1 ? ids[0]! : null };
    if (kind === "team" && !workspaceId) outcome.reason = "its workspace's identifier is not known";
    else if (ids.length > 1) outcome.reason = `several identifiers learned for this name (${ids.join(", ")})`;
    else if (!ids.length) outcome.reason = "no identifier learned yet";
    outcomes.push(outcome);
    return outcome.id;
  };

  /** A `{ name }` map gets `id` right after `name`; returns the map's identifier, given or pinned. */
  const pinMap = (map: YAMLMap, kind: Kind, where: string, workspaceId: string | null) => {
    const given = stringIn(map, "id");
    const name = stringIn(map, "name");
    if (given !== undefined || name === undefined) return given ?? null;
    const id = lookup(kind, name, where, file.lineOf(map), workspaceId);
    const after = map.items.findIndex((p) => isScalar(p.key) && p.key.value === "name") + 1;
    if (id) map.items.splice(after, 0, new Pair(new Scalar("id"), new Scalar(id)));
    return id;
  };

  /** Roles and permission sets: names or `{ name, id }` maps; a plain name becomes `{ name, id }`. */
  const pinReferences = (seq: YAMLSeq | undefined, kind: "role" | "permissionSet", where: string) => {
    seq?.items.forEach((raw, index) => {
      const item = file.deref(raw);
      if (isMap(item)) pinMap(item, kind, where, null);
      if (!isStringScalar(item)) return;
      const id = lookup(kind, item.value, where, file.lineOf(item), null);
      if (!id) return;
      const map = new YAMLMap();
      map.flow = seq.flow;
      map.commentBefore = item.commentBefore;
      map.spaceBefore = item.spaceBefore;
      item.commentBefore = undefined;
      item.spaceBefore = false;
      map.add(new Pair(new Scalar("name"), item));
      map.add(new Pair(new Scalar("id"), new Scalar(id)));
      seq.items[index] = map;
    });
  };

  const { rules, workspaces } = file.entries();
  for (const rule of rules) pinReferences(file.seqIn(rule.map, "roles"), "role", `${rule.place.scope}, roles`);
  for (const ws of workspaces) {
    const where = `${ws.place.scope}, ${ws.place.where}`;
    const workspaceId = pinMap(ws.map, "workspace", where, null);
    pinReferences(file.seqIn(ws.map, "permissionSets"), "permissionSet", where);
    for (const team of ws.teams) pinMap(team.map, "team", `${team.place.scope}, ${team.place.where}`, workspaceId);
  }
  return outcomes;
}

import type { Queryable } from "../database.js";

/**
 * Custom roles, permission sets and teams edited in the platform's dashboard, as its record says
 * (the connector cannot read their definitions; it can say they changed). One row per event.
 */
export type CatalogueEditKind = "role" | "permission-set" | "team";

export type CatalogueEdit = {
  kind: CatalogueEditKind;
  /** The role's, set's or team's name as the report wrote it (null: the report named none). */
  name: string | null;
  /** The report's event name ("Updated Custom Role"). */
  event: string;
  at: Date;
  actor: string;
};

/** Stores an edit once per event (`eventId`: the platform_events row it came from). */
export async function recordCatalogueEdit(db: Queryable, eventId: string, edit: CatalogueEdit): Promise<void> {
  await db.query(
    `INSERT INTO platform_catalogue_edits (event_id, kind, name, event, at, actor) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (event_id) DO NOTHING`,
    [eventId, edit.kind, edit.name, edit.event, edit.at, edit.actor],
  );
}

/** The latest edit of each of these names (case-insensitive), per kind, for the mapping page. */
export async function latestCatalogueEdits(
  db: Queryable,
  names: { kind: CatalogueEditKind; name: string }[],
): Promise<CatalogueEdit[]> {
  if (!names.length) return [];
  return db.query(
    `SELECT DISTINCT ON (e.kind, lower(e.name)) e.kind, e.name, e.event, e.at, e.actor
       FROM platform_catalogue_edits e
       JOIN unnest($1::text[], $2::text[]) AS w(kind, name) ON e.kind = w.kind AND lower(e.name) = lower(w.name)
      ORDER BY e.kind, lower(e.name), e.at DESC`,
    [names.map((n) => n.kind), names.map((n) => n.name)],
  );
}

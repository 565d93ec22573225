import type { Queryable } from "../database.js";

/**
 * The platform's API identifiers of workspaces, teams, roles and permission sets, learned from its
 * answers (`platform_identifiers`), and what its answers show of its permission model
 * (`platform_permission_model`). See migrations/1763700001800-platform-identifiers.ts.
 */

export type IdentifierKind = "workspace" | "team" | "role" | "permissionSet";

export type LearnedIdentifier = {
  kind: IdentifierKind;
  id: string;
  name: string;
  workspaceId: string | null;
  firstSeen: Date;
  lastSeen: Date;
  previousName: string | null;
  renamedAt: Date | null;
};

/** A rename the platform's answer showed: same identifier, another name. */
export type Rename = { kind: IdentifierKind; id: string; from: string; to: string };

/**
 * Records the identifiers of one answer in one statement; returns the renames it revealed. Only
 * an identifier seen for the first time, or under a new name, writes a row version; one already
 * known under the same name updates `last_seen` at most once a minute.
 */
export async function recordIdentifiers(
  db: Queryable,
  seen: readonly { kind: IdentifierKind; id: string; name: string; workspaceId: string | null }[],
  now: Date,
): Promise<Rename[]> {
  if (!seen.length) return [];
  const rows: { kind: IdentifierKind; id: string; previous_name: string; name: string }[] = await db.query(
    `WITH seen AS (
       SELECT DISTINCT ON (kind, id) kind, id, name, workspace_id
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS s(kind, id, name, workspace_id)
     ),
     before AS (
       SELECT i.kind, i.id, i.name FROM platform_identifiers i JOIN seen USING (kind, id)
     ),
     upserted AS (
       INSERT INTO platform_identifiers AS i (kind, id, name, workspace_id, first_seen, last_seen)
         SELECT kind, id, name, workspace_id, $5, $5 FROM seen
       ON CONFLICT (kind, id) DO UPDATE SET
         name = EXCLUDED.name,
         workspace_id = COALESCE(EXCLUDED.workspace_id, i.workspace_id),
         last_seen = EXCLUDED.last_seen,
         previous_name = CASE WHEN i.name <> EXCLUDED.name THEN i.name ELSE i.previous_name END,
         renamed_at = CASE WHEN i.name <> EXCLUDED.name THEN EXCLUDED.last_seen ELSE i.renamed_at END
       WHERE i.name <> EXCLUDED.name OR i.last_seen < EXCLUDED.last_seen - interval '1 minute'
       RETURNING i.kind, i.id, i.name
     )
     SELECT u.kind, u.id, b.name AS previous_name, u.name
       FROM upserted u JOIN before b USING (kind, id) WHERE b.name <> u.name`,
    [
      seen.map((s) => s.kind),
      seen.map((s) => s.id.toLowerCase()),
      seen.map((s) => s.name),
      seen.map((s) => s.workspaceId?.toLowerCase() ?? null),
      now,
    ],
  );
  return rows.map((r) => ({ kind: r.kind, id: r.id, from: r.previous_name, to: r.name }));
}

export async function listPlatformIdentifiers(db: Queryable): Promise<LearnedIdentifier[]> {
  const rows: {
    kind: IdentifierKind;
    id: string;
    name: string;
    workspace_id: string | null;
    first_seen: Date;
    last_seen: Date;
    previous_name: string | null;
    renamed_at: Date | null;
  }[] = await db.query(
    `SELECT kind, id, name, workspace_id, first_seen, last_seen, previous_name, renamed_at
       FROM platform_identifiers ORDER BY kind, name, id`,
  );
  return rows.map((r) => ({
    kind: r.kind,
    id: r.id,
    name: r.name,
    workspaceId: r.workspace_id,
    firstSeen: r.first_seen,
    lastSeen: r.last_seen,
    previousName: r.previous_name,
    renamedAt: r.renamed_at,
  }));
}

export type PermissionModelState = {
  granularSeenAt: Date | null;
  legacySeenAt: Date | null;
  legacyRefusedAt: Date | null;
  refusedValue: string | null;
  refusedDetail: string | null;
};

export async function getPermissionModelState(db: Queryable): Promise<PermissionModelState> {
  const rows: {
    granular_seen_at: Date | null;
    legacy_seen_at: Date | null;
    legacy_refused_at: Date | null;
    refused_value: string | null;
    refused_detail: string | null;
  }[] = await db.query(
    `SELECT granular_seen_at, legacy_seen_at, legacy_refused_at, refused_value, refused_detail
       FROM platform_permission_model WHERE id = 1`,
  );
  const r = rows[0];
  return {
    granularSeenAt: r?.granular_seen_at ?? null,
    legacySeenAt: r?.legacy_seen_at ?? null,
    legacyRefusedAt: r?.legacy_refused_at ?? null,
    refusedValue: r?.refused_value ?? null,
    refusedDetail: r?.refused_detail ?? null,
  };
}

/** An answer carried strings of this model (written at most once a minute per model). */
export async function noteModelSeen(db: Queryable, model: "legacy" | "granular", now: Date): Promise<void> {
  const column = model === "granular" ? "granular_seen_at" : "legacy_seen_at";
  await db.query(
    `INSERT INTO platform_permission_model (id, ${column}) VALUES (1, $1)
     ON CONFLICT (id) DO UPDATE SET ${column} = $1
       WHERE platform_permission_model.${column} IS NULL OR platform_permission_model.${column} < $1::timestamptz - interval '1 minute'`,
    [now],
  );
}

/** The platform refused a legacy string; true when this opens the incident (it was not already refusing). */
export async function noteLegacyRefused(db: Queryable, value: string, detail: string, now: Date): Promise<boolean> {
  const rows: { opened: boolean }[] = await db.query(
    `INSERT INTO platform_permission_model AS m (id, legacy_refused_at, refused_value, refused_detail, granular_seen_at)
       VALUES (1, $1, $2, $3, $1)
     ON CONFLICT (id) DO UPDATE SET refused_value = $2, refused_detail = $3, granular_seen_at = $1,
       legacy_refused_at = COALESCE(m.legacy_refused_at, $1)
     RETURNING (xmax = 0 OR legacy_refused_at = $1) AS opened`,
    [now, value, detail],
  );
  return rows[0]?.opened ?? false;
}

/** The held grants went out (the mapping no longer carries legacy strings): the incident is over. */
export async function clearLegacyRefused(db: Queryable): Promise<boolean> {
  const rows = await db.query(
    `UPDATE platform_permission_model SET legacy_refused_at = NULL WHERE id = 1 AND legacy_refused_at IS NOT NULL RETURNING 1`,
  );
  return rows.length > 0;
}

/** Users whose grant waits for the mapping to leave legacy strings (filed `held-legacy` on the queue). */
export async function countHeldForLegacy(db: Queryable): Promise<number> {
  const rows: { n: number }[] = await db.query(
    `SELECT count(*)::int AS n FROM reconcile_queue WHERE action = 'held-legacy'`,
  );
  return rows[0]?.n ?? 0;
}

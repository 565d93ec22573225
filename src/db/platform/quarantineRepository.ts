import type { Database, Queryable } from "../database.js";

/** The shared quarantine table (see migrations/1763700000600-quarantine.ts and platform/quarantine.ts). */

export type QuarantineReason = "auth" | "failure_rate";

export type QuarantineRow = {
  family: string;
  reason: QuarantineReason;
  detail: string;
  lastStatus: number | null;
  since: Date;
  resumeAt: Date;
  failedProbes: number;
  trippedBy: string;
  probeOwner: string | null;
  probeUntil: Date | null;
};

const COLUMNS = `family, reason, detail, last_status AS "lastStatus", since, resume_at AS "resumeAt",
  failed_probes AS "failedProbes", tripped_by AS "trippedBy", probe_owner AS "probeOwner", probe_until AS "probeUntil"`;

export async function listQuarantines(db: Database): Promise<QuarantineRow[]> {
  return db.query(`SELECT ${COLUMNS} FROM platform_quarantine ORDER BY since`);
}

export async function getQuarantine(db: Database, family: string): Promise<QuarantineRow | undefined> {
  const rows: QuarantineRow[] = await db.query(`SELECT ${COLUMNS} FROM platform_quarantine WHERE family = $1`, [
    family,
  ]);
  return rows[0];
}

/** The row when this call started the quarantine; undefined when the family already was quarantined. */
export async function enterQuarantine(
  db: Queryable,
  entry: {
    family: string;
    reason: QuarantineReason;
    detail: string;
    lastStatus: number | null;
    since: Date;
    resumeAt: Date;
    trippedBy: string;
  },
): Promise<QuarantineRow | undefined> {
  const rows: QuarantineRow[] = await db.query(
    `INSERT INTO platform_quarantine (family, reason, detail, last_status, since, resume_at, tripped_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (family) DO NOTHING RETURNING ${COLUMNS}`,
    [entry.family, entry.reason, entry.detail, entry.lastStatus, entry.since, entry.resumeAt, entry.trippedBy],
  );
  return rows[0];
}

/** Takes the half-open probe: only after cooling, and only when no other replica holds an unexpired one. */
export async function claimProbe(
  db: Database,
  family: string,
  owner: string,
  now: Date,
  until: Date,
): Promise<boolean> {
  const result = await db.query(
    `UPDATE platform_quarantine SET probe_owner = $2, probe_until = $4
      WHERE family = $1 AND resume_at <= $3 AND (probe_until IS NULL OR probe_until <= $3)
      RETURNING family`,
    [family, owner, now, until],
  );
  return result.length > 0;
}

/** Gives the probe back unused (the prober found no work, or made no call). */
export async function releaseProbe(db: Database, family: string, owner: string): Promise<void> {
  await db.query(
    `UPDATE platform_quarantine SET probe_owner = NULL, probe_until = NULL WHERE family = $1 AND probe_owner = $2`,
    [family, owner],
  );
}

/** The probe failed: another cooling period. */
export async function failProbe(
  db: Database,
  family: string,
  owner: string,
  resumeAt: Date,
  detail: string,
  lastStatus: number | null,
): Promise<QuarantineRow | undefined> {
  const result = await db.query(
    `UPDATE platform_quarantine
        SET probe_owner = NULL, probe_until = NULL, resume_at = $3, detail = $4, last_status = $5, failed_probes = failed_probes + 1
      WHERE family = $1 AND probe_owner = $2
      RETURNING ${COLUMNS}`,
    [family, owner, resumeAt, detail, lastStatus],
  );
  return result[0] as QuarantineRow | undefined;
}

/** Ends the quarantine (admin resume, or a successful probe). With `probeOwner`, only while that replica holds the probe. */
export async function liftQuarantine(
  db: Queryable,
  family: string,
  probeOwner?: string,
): Promise<QuarantineRow | undefined> {
  const result = probeOwner
    ? await db.query(`DELETE FROM platform_quarantine WHERE family = $1 AND probe_owner = $2 RETURNING ${COLUMNS}`, [
        family,
        probeOwner,
      ])
    : await db.query(`DELETE FROM platform_quarantine WHERE family = $1 RETURNING ${COLUMNS}`, [family]);
  return result[0] as QuarantineRow | undefined;
}

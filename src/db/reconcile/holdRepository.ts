import type { Queryable } from "../database.js";

/** Actions held for an admin: mass deprovisions and email changes. */
export type HoldKind = "deprovision" | "email_change";
export type Hold = {
  userId: string;
  kind: HoldKind;
  userName: string | null;
  detail: Record<string, unknown>;
  createdAt: Date;
  decision: "approved" | "rejected" | null;
  decidedBy: string | null;
  decidedAt: Date | null;
};

type Row = {
  user_id: string;
  kind: HoldKind;
  user_name: string | null;
  detail: Record<string, unknown>;
  created_at: Date;
  decision: Hold["decision"];
  decided_by: string | null;
  decided_at: Date | null;
};

const mapHold = (r: Row): Hold => ({
  userId: r.user_id,
  kind: r.kind,
  userName: r.user_name,
  detail: r.detail,
  createdAt: r.created_at,
  decision: r.decision,
  decidedBy: r.decided_by,
  decidedAt: r.decided_at,
});

export async function getHold(db: Queryable, userId: string): Promise<Hold | undefined> {
  const rows: Row[] = await db.query(`SELECT * FROM reconcile_holds WHERE user_id = $1`, [userId]);
  return rows[0] ? mapHold(rows[0]) : undefined;
}

/** Creates (or renews) an undecided hold; returns false when one of that kind was already waiting. */
export async function createHold(
  db: Queryable,
  hold: { userId: string; kind: HoldKind; userName: string; detail: object; now: Date },
): Promise<boolean> {
  const rows: { inserted: boolean }[] = await db.query(
    `INSERT INTO reconcile_holds (user_id, kind, user_name, detail, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (user_id) DO UPDATE SET kind = EXCLUDED.kind, user_name = EXCLUDED.user_name, detail = EXCLUDED.detail,
       created_at = CASE WHEN reconcile_holds.kind = EXCLUDED.kind THEN reconcile_holds.created_at ELSE EXCLUDED.created_at END,
       decision = CASE WHEN reconcile_holds.kind = EXCLUDED.kind THEN reconcile_holds.decision END,
       decided_by = CASE WHEN reconcile_holds.kind = EXCLUDED.kind THEN reconcile_holds.decided_by END,
       decided_at = CASE WHEN reconcile_holds.kind = EXCLUDED.kind THEN reconcile_holds.decided_at END
     RETURNING (xmax = 0) AS inserted`,
    [hold.userId, hold.kind, hold.userName, JSON.stringify(hold.detail), hold.now],
  );
  return rows[0]?.inserted ?? false;
}

export async function listHolds(db: Queryable, options: { pendingOnly?: boolean } = {}): Promise<Hold[]> {
  const rows: Row[] = await db.query(
    `SELECT * FROM reconcile_holds ${options.pendingOnly ? "WHERE decision IS NULL" : ""} ORDER BY created_at, user_id`,
  );
  return rows.map(mapHold);
}

export async function decideHold(
  db: Queryable,
  userId: string,
  decision: "approved" | "rejected",
  actor: string,
  now: Date,
): Promise<Hold | undefined> {
  const rows = await db.query<Row>(
    `UPDATE reconcile_holds SET decision = $2, decided_by = $3, decided_at = $4 WHERE user_id = $1 AND decision IS NULL RETURNING *`,
    [userId, decision, actor, now],
  );
  return rows[0] ? mapHold(rows[0]) : undefined;
}

/** Holds of this kind still waiting for an admin (the breaker counts held deprovisions as part of the wave). */
export async function countUndecidedHolds(db: Queryable, kind: HoldKind): Promise<number> {
  const rows: { n: number }[] = await db.query(
    `SELECT count(*)::int AS n FROM reconcile_holds WHERE kind = $1 AND decision IS NULL`,
    [kind],
  );
  return rows[0]?.n ?? 0;
}

export async function deleteHold(db: Queryable, userId: string): Promise<void> {
  await db.query(`DELETE FROM reconcile_holds WHERE user_id = $1`, [userId]);
}

/** Undecided holds per kind (the approval.required message). */
export async function undecidedHoldCounts(db: {
  query(sql: string): Promise<unknown>;
}): Promise<{ count: number; kinds: HoldKind[] }> {
  const rows = <{ kind: HoldKind; n: number }[]>(
    await db.query(
      `SELECT kind, count(*)::int AS n FROM reconcile_holds WHERE decision IS NULL GROUP BY kind ORDER BY kind`,
    )
  );
  return { count: rows.reduce((sum, r) => sum + r.n, 0), kinds: rows.map((r) => r.kind) };
}

/** Undecided holds by kind. */
export async function countPendingHolds(db: Queryable): Promise<{ deprovisions: number; emailChanges: number }> {
  const rows: { kind: string; n: number }[] = await db.query(
    `SELECT kind, count(*)::int AS n FROM reconcile_holds WHERE decision IS NULL GROUP BY kind`,
  );
  const of = (kind: string) => rows.find((r) => r.kind === kind)?.n ?? 0;
  return { deprovisions: of("deprovision"), emailChanges: of("email_change") };
}

/** Every held action, decided or not: they were the old platform's (`platform forget`). */
export async function deleteAllHolds(tx: Queryable): Promise<void> {
  await tx.query(`DELETE FROM reconcile_holds`);
}

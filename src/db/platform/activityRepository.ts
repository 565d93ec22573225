import type { Queryable } from "../database.js";

/**
 * What the platform's record says of each account's use (docs/platform-record.md): its last sign-in,
 * its last failed login and whether it is suspended, by userName (lower-cased). Events may be
 * imported out of order (a manual report after the daily export): each fact keeps its latest.
 */
export type AccountActivity = {
  userName: string;
  lastSignInAt: Date | null;
  lastFailedLoginAt: Date | null;
  suspended: boolean;
  suspendedAt: Date | null;
  suspendedBy: string | null;
};

type Row = {
  user_name: string;
  last_sign_in_at: Date | null;
  last_failed_login_at: Date | null;
  suspended: boolean;
  suspended_at: Date | null;
  suspended_by: string | null;
};

const mapActivity = (r: Row): AccountActivity => ({
  userName: r.user_name,
  lastSignInAt: r.last_sign_in_at,
  lastFailedLoginAt: r.last_failed_login_at,
  suspended: r.suspended,
  suspendedAt: r.suspended_at,
  suspendedBy: r.suspended_by,
});

export type ActivityFact =
  { fact: "signed-in" | "failed-login"; at: Date } | { fact: "suspended" | "unsuspended"; at: Date; actor: string };

/** Records one fact unless a later one of its kind is already known. */
export async function recordActivityFact(db: Queryable, userName: string, f: ActivityFact): Promise<void> {
  const name = userName.toLowerCase();
  if (f.fact === "signed-in" || f.fact === "failed-login") {
    const column = f.fact === "signed-in" ? "last_sign_in_at" : "last_failed_login_at";
    await db.query(
      `INSERT INTO platform_account_activity (user_name, ${column}) VALUES ($1, $2)
       ON CONFLICT (user_name) DO UPDATE SET ${column} = GREATEST(platform_account_activity.${column}, EXCLUDED.${column})`,
      [name, f.at],
    );
    return;
  }
  if (f.fact !== "suspended" && f.fact !== "unsuspended") return;
  const suspended = f.fact === "suspended";
  await db.query(
    `INSERT INTO platform_account_activity (user_name, suspended, suspended_at, suspended_by, suspension_changed_at)
     VALUES ($1, $2, CASE WHEN $2 THEN $3::timestamptz END, CASE WHEN $2 THEN $4 END, $3)
     ON CONFLICT (user_name) DO UPDATE SET suspended = EXCLUDED.suspended, suspended_at = EXCLUDED.suspended_at,
       suspended_by = EXCLUDED.suspended_by, suspension_changed_at = EXCLUDED.suspension_changed_at
     WHERE platform_account_activity.suspension_changed_at IS NULL OR platform_account_activity.suspension_changed_at <= EXCLUDED.suspension_changed_at`,
    [name, suspended, f.at, f.actor],
  );
}

/**
 * Many sign-ins and failed logins at once, one statement: each account keeps the latest of each
 * (a report holds thousands of them; one upsert each was most of an import's time).
 */
export async function recordSignInFacts(
  db: Queryable,
  facts: readonly { userName: string; fact: "signed-in" | "failed-login"; at: Date }[],
): Promise<void> {
  if (!facts.length) return;
  await db.query(
    `INSERT INTO platform_account_activity (user_name, last_sign_in_at, last_failed_login_at)
     SELECT name, max(at) FILTER (WHERE fact = 'signed-in'), max(at) FILTER (WHERE fact = 'failed-login')
       FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS f(name, fact, at)
      GROUP BY name
     ON CONFLICT (user_name) DO UPDATE SET
       last_sign_in_at = GREATEST(platform_account_activity.last_sign_in_at, EXCLUDED.last_sign_in_at),
       last_failed_login_at = GREATEST(platform_account_activity.last_failed_login_at, EXCLUDED.last_failed_login_at)`,
    [facts.map((f) => f.userName.toLowerCase()), facts.map((f) => f.fact), facts.map((f) => f.at)],
  );
}

export async function getActivity(db: Queryable, userName: string): Promise<AccountActivity | undefined> {
  const rows: Row[] = await db.query(`SELECT * FROM platform_account_activity WHERE user_name = $1`, [
    userName.toLowerCase(),
  ]);
  return rows[0] ? mapActivity(rows[0]) : undefined;
}

export async function getActivities(
  db: Queryable,
  userNames: readonly string[],
): Promise<Map<string, AccountActivity>> {
  if (!userNames.length) return new Map();
  const rows: Row[] = await db.query(`SELECT * FROM platform_account_activity WHERE user_name = ANY($1::text[])`, [
    userNames.map((n) => n.toLowerCase()),
  ]);
  return new Map(rows.map((r) => [r.user_name, mapActivity(r)]));
}

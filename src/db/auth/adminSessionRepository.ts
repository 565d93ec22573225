import type { Database } from "../database.js";

/**
 * Admin UI sign-in state (see migration AdminSessions1763700000400): session rows, the cookie
 * signing key, and the SAML request ids sent / responses consumed.
 */
export class AdminSessionRepository {
  constructor(private readonly db: Database) {}

  async findLiveSession(sid: string, now: Date): Promise<unknown | undefined> {
    const rows: { sess: unknown }[] = await this.db.query(
      `SELECT sess FROM admin_sessions WHERE sid = $1 AND expires_at > $2`,
      [sid, now],
    );
    return rows[0]?.sess;
  }

  async saveSession(sid: string, sess: unknown, expiresAt: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO admin_sessions (sid, sess, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (sid) DO UPDATE SET sess = EXCLUDED.sess, expires_at = EXCLUDED.expires_at`,
      [sid, JSON.stringify(sess), expiresAt],
    );
  }

  async extendSession(sid: string, expiresAt: Date): Promise<void> {
    await this.db.query(`UPDATE admin_sessions SET expires_at = $2 WHERE sid = $1`, [sid, expiresAt]);
  }

  async deleteSession(sid: string): Promise<void> {
    await this.db.query(`DELETE FROM admin_sessions WHERE sid = $1`, [sid]);
  }

  async deleteExpiredSessions(now: Date): Promise<number> {
    return this.db.execute(`DELETE FROM admin_sessions WHERE expires_at <= $1`, [now]);
  }

  /** The key that signs session cookies; the migration creates it. */
  async getCookieSecret(): Promise<string> {
    const rows: { secret: Buffer }[] = await this.db.query(`SELECT secret FROM admin_session_secret WHERE id = 1`);
    if (!rows[0]) throw new Error("admin_session_secret is empty: run the migrations");
    return rows[0].secret.toString("base64");
  }

  async rememberAuthnRequest(id: string, now: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO saml_authn_requests (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,
      [id, now],
    );
  }

  /** When the request was sent, if it is still awaiting its response and younger than `notBefore`. */
  async findAuthnRequest(id: string, notBefore: Date): Promise<Date | undefined> {
    const rows: { created_at: Date }[] = await this.db.query(
      `SELECT created_at FROM saml_authn_requests WHERE id = $1 AND created_at >= $2`,
      [id, notBefore],
    );
    return rows[0]?.created_at;
  }

  async forgetAuthnRequest(id: string): Promise<boolean> {
    return (await this.db.execute(`DELETE FROM saml_authn_requests WHERE id = $1`, [id])) > 0;
  }

  async deleteAuthnRequestsBefore(cutoff: Date): Promise<void> {
    await this.db.query(`DELETE FROM saml_authn_requests WHERE created_at < $1`, [cutoff]);
  }

  async deleteConsumedResponsesBefore(cutoff: Date): Promise<void> {
    await this.db.query(`DELETE FROM saml_consumed_responses WHERE consumed_at < $1`, [cutoff]);
  }

  /** True the first time a response to `inResponseTo` is accepted; false for every replay. */
  async consumeResponse(inResponseTo: string, now: Date): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `INSERT INTO saml_consumed_responses (in_response_to, consumed_at) VALUES ($1, $2)
       ON CONFLICT (in_response_to) DO NOTHING RETURNING in_response_to`,
      [inResponseTo, now],
    );
    return rows.length > 0;
  }
}

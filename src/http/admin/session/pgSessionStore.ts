import session from "express-session";
import type { Clock } from "../../../clock.js";
import type { AdminSessions } from "../../../admin/sessions.js";

/**
 * express-session store over PostgreSQL, so sessions survive restarts and are shared by replicas.
 * The row's expires_at is the earlier of the idle deadline (express-session, rolling, moves the
 * cookie's expiry forward on every request and `touch` carries that into the row) and the
 * absolute one: `maxAgeMs` after sign-in, which the store stamps when a session first holds an
 * actor. Past it the session is gone however active it was.
 */
export class PgSessionStore extends session.Store {
  private lastPrune = 0;
  private readonly idleMs: number;
  private readonly maxAgeMs: number;

  constructor(
    private readonly sessions: AdminSessions,
    private readonly clock: Clock,
    lifetime: { idleMs: number; maxAgeMs: number },
  ) {
    super();
    this.idleMs = lifetime.idleMs;
    this.maxAgeMs = lifetime.maxAgeMs;
  }

  override get(sid: string, callback: (err: unknown, session?: session.SessionData | null) => void): void {
    const now = this.clock.now();
    this.sessions.findLiveSession(sid, now).then(
      (found) => {
        const sess = found as session.SessionData | undefined;
        if (sess?.signedInAt !== undefined && sess.signedInAt + this.maxAgeMs <= now.getTime()) {
          this.sessions.deleteSession(sid).catch(() => undefined);
          return callback(null, null);
        }
        callback(null, sess ?? null);
      },
      (error: unknown) => callback(error),
    );
  }

  override set(sid: string, sess: session.SessionData, callback?: (err?: unknown) => void): void {
    if (sess.actor && sess.signedInAt === undefined) sess.signedInAt = this.clock.now().getTime();
    this.sessions.saveSession(sid, sess, this.expiresAt(sess)).then(
      () => {
        callback?.();
        this.pruneNowAndThen();
      },
      (error: unknown) => callback?.(error),
    );
  }

  override touch(sid: string, sess: session.SessionData, callback?: () => void): void {
    this.sessions.extendSession(sid, this.expiresAt(sess)).then(
      () => callback?.(),
      () => callback?.(),
    );
  }

  override destroy(sid: string, callback?: (err?: unknown) => void): void {
    this.sessions.deleteSession(sid).then(
      () => callback?.(),
      (error: unknown) => callback?.(error),
    );
  }

  private expiresAt(sess: session.SessionData): Date {
    const cookieExpiry = sess.cookie?.expires;
    const idle = cookieExpiry ? new Date(cookieExpiry).getTime() : this.clock.now().getTime() + this.idleMs;
    return new Date(sess.signedInAt === undefined ? idle : Math.min(idle, sess.signedInAt + this.maxAgeMs));
  }

  /** Deleting expired rows at most every ten minutes keeps the table small without a job. */
  private pruneNowAndThen(): void {
    const now = this.clock.now();
    if (now.getTime() - this.lastPrune < 10 * 60_000) return;
    this.lastPrune = now.getTime();
    this.sessions.deleteExpiredSessions(now).catch(() => undefined);
  }
}

import session from "express-session";
import type { Clock } from "../../../clock.js";
import type { AdminSessionRepository } from "../../../db/adminSessionRepository.js";

/**
 * express-session store over PostgreSQL, so sessions survive restarts and are shared by replicas.
 * The row's expires_at is the idle deadline: express-session (rolling) moves the cookie's expiry
 * forward on every request and `touch` carries that into the row.
 */
export class PgSessionStore extends session.Store {
  private lastPrune = 0;

  constructor(
    private readonly sessions: AdminSessionRepository,
    private readonly clock: Clock,
    private readonly idleMs: number,
  ) {
    super();
  }

  override get(sid: string, callback: (err: unknown, session?: session.SessionData | null) => void): void {
    this.sessions.findLiveSession(sid, this.clock.now()).then(
      (sess) => callback(null, (sess as session.SessionData | undefined) ?? null),
      (error: unknown) => callback(error),
    );
  }

  override set(sid: string, sess: session.SessionData, callback?: (err?: unknown) => void): void {
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
    if (cookieExpiry) return new Date(cookieExpiry);
    return new Date(this.clock.now().getTime() + this.idleMs);
  }

  /** Deleting expired rows at most every ten minutes keeps the table small without a job. */
  private pruneNowAndThen(): void {
    const now = this.clock.now();
    if (now.getTime() - this.lastPrune < 10 * 60_000) return;
    this.lastPrune = now.getTime();
    this.sessions.deleteExpiredSessions(now).catch(() => undefined);
  }
}

/**
 * What the admin UI keeps across requests (sessions, the cookie's secret, SAML request ids and the
 * responses consumed), as src/http asks for it. src/db/auth/adminSessionRepository.ts is the one store,
 * built once by src/service/http.ts.
 */
export type AdminSessions = {
  findLiveSession(sid: string, now: Date): Promise<unknown>;
  saveSession(sid: string, sess: unknown, expiresAt: Date): Promise<void>;
  extendSession(sid: string, expiresAt: Date): Promise<void>;
  deleteSession(sid: string): Promise<void>;
  deleteExpiredSessions(now: Date): Promise<number>;
  getCookieSecret(): Promise<string>;
  rememberAuthnRequest(id: string, now: Date): Promise<void>;
  findAuthnRequest(id: string, notBefore: Date): Promise<Date | undefined>;
  forgetAuthnRequest(id: string): Promise<boolean>;
  deleteAuthnRequestsBefore(cutoff: Date): Promise<void>;
  deleteConsumedResponsesBefore(cutoff: Date): Promise<void>;
  /** True the first time a SAML response (by its InResponseTo) is consumed; false on a replay. */
  consumeResponse(inResponseTo: string, now: Date): Promise<boolean>;
};

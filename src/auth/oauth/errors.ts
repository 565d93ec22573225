/**
 * The token endpoint's errors (RFC 6749 section 5.2): a code the client acts on and a description
 * for its admin. `invalid_client` answers 401 (with WWW-Authenticate when the client used Basic),
 * and counts toward the failed-auth throttle; the others answer 400.
 */

export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "access_denied"
  | "server_error";

export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    options?: ErrorOptions,
  ) {
    super(description, options);
    this.name = "OAuthError";
  }

  get status(): number {
    return this.code === "invalid_client" ? 401 : this.code === "server_error" ? 503 : 400;
  }

  /** True when the request failed to authenticate a client (what the throttle counts). */
  get isAuthenticationFailure(): boolean {
    return this.code === "invalid_client" || this.code === "invalid_grant";
  }
}

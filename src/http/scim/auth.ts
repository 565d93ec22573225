import type { IncomingMessage, ServerResponse } from "node:http";
import type { ScimTokenVerifier } from "../../auth/scimTokens.js";
import type { FailedAuthThrottle } from "../../auth/authThrottle.js";
import { sendScimError } from "./respond.js";

const BEARER = /^Bearer +([\x21-\x7e]{1,512}) *$/i;
/** "Bearer " pasted into an IdP's token field, which adds its own. */
const DOUBLED_BEARER = /^Bearer +Bearer +\S/i;

function missingTokenDetail(authorization: string | undefined): string {
  return DOUBLED_BEARER.test(authorization ?? "")
    ? 'The Authorization header says "Bearer" twice: enter only the token in the IdP\'s token field (the IdP adds "Bearer " itself)'
    : "A bearer token is required (Authorization: Bearer <token>)";
}

/**
 * Bearer-token authentication for every SCIM endpoint: true when the request may go on, else it
 * has been answered 401 with WWW-Authenticate (RFC 6750). A wrong token counts toward the
 * failed-auth throttle, by the client's address (`clientAddress`, which honours TRUST_PROXY); past
 * it the answer is 429 with Retry-After (a valid token always passes: see authThrottle.ts). A
 * token the verifier knows from memory (nearly every request) is let through synchronously; an
 * unknown one from an address the throttle already refuses is answered 429 without a lookup (the
 * global cap never skips the lookup: a valid token passes whatever others have sent).
 */
export function scimAuthenticator(
  verifier: ScimTokenVerifier,
  throttle: FailedAuthThrottle | undefined,
  clientAddress: (req: IncomingMessage) => string | undefined,
) {
  const refuse = async (req: IncomingMessage, res: ServerResponse, match: RegExpExecArray | null) => {
    const throttled = match ? await throttle?.recordFailure(clientAddress(req)) : undefined;
    if (throttled) {
      res.setHeader("Retry-After", String(throttled.retryAfterSeconds));
      sendScimError(
        res,
        429,
        `Too many requests with a wrong bearer token; try again in ${throttled.retryAfterSeconds} s`,
      );
      return false;
    }
    res.setHeader("WWW-Authenticate", 'Bearer realm="scim"');
    sendScimError(res, 401, match ? "The bearer token is not valid" : missingTokenDetail(req.headers.authorization));
    return false;
  };
  return (req: IncomingMessage, res: ServerResponse): true | Promise<boolean> => {
    const match = BEARER.exec(req.headers.authorization ?? "");
    // The address's throttle is asked before an unknown token is looked up (only then: the hot path asks nothing).
    const verified = match
      ? verifier.verify(match[1]!, throttle && (() => throttle.addressBlockedNow(clientAddress(req))))
      : false;
    if (verified === true) return true;
    if (verified === false) return refuse(req, res, match);
    return verified.then((valid) => valid || refuse(req, res, match));
  };
}

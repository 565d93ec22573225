import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * AuthnRequest ids that carry their own proof: `_s<issued, ms in base 36>-<nonce>-<HMAC-SHA256>`,
 * keyed with the admin cookie secret (shared by every replica through the database). A sign-in
 * started past its address's allowance stores nothing: its id alone shows that this service
 * issued it and when, so the ACS can accept the response without a stored row, and a crowd
 * behind one address (an office NAT, an ingress) cannot lock its admins out by starting
 * sign-ins. A response is still used once (consumeResponse) and only in the browser that started
 * it (samlLoginBinding.ts).
 */

const SIGNED = /^_s([0-9a-z]{1,12})-([0-9a-f]{32})-([0-9a-f]{64})$/;

function mac(secret: string, payload: string): Buffer {
  return createHmac("sha256", secret).update(`saml-authn-request:${payload}`, "utf8").digest();
}

export function signedRequestId(secret: string, now: Date): string {
  const payload = `${now.getTime().toString(36)}-${randomBytes(16).toString("hex")}`;
  return `_s${payload}-${mac(secret, payload).toString("hex")}`;
}

/** When a signed id was issued, or undefined when it is not one of ours. */
export function signedRequestIssuedAt(secret: string, id: string): Date | undefined {
  const match = SIGNED.exec(id);
  if (!match) return undefined;
  const payload = `${match[1]}-${match[2]}`;
  if (!timingSafeEqual(Buffer.from(match[3]!, "hex"), mac(secret, payload))) return undefined;
  return new Date(parseInt(match[1]!, 36));
}

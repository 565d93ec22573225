import { createHash, timingSafeEqual } from "node:crypto";

/**
 * The local-mode admin token (ADMIN_TOKEN): the admin JSON API's bearer and the UI's sign-in
 * secret when SAML is not configured. `npm start` without ADMIN_TOKEN makes one
 * (`cli/boot.ts` `ensureAdminToken`).
 */

/** Constant-time comparison (hashes first, so lengths never leak either). */
export function adminTokenMatches(presented: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * The local-mode admin token (ADMIN_TOKEN): the admin JSON API's bearer and the UI's sign-in
 * secret when SAML is not configured. `npm start` without ADMIN_TOKEN uses one kept in
 * `<dataDir>/admin-token` (mode 600), made on first start, so every start prints the same one.
 */

const MIN_LENGTH = 16;

export async function ensureAdminToken(dataDir: string): Promise<string> {
  const file = path.resolve(dataDir, "admin-token");
  if (existsSync(file)) {
    const token = (await readFile(file, "utf8")).trim();
    if (token.length >= MIN_LENGTH) {
      await chmod(file, 0o600);
      return token;
    }
  }
  const token = `adm_${randomBytes(24).toString("base64url")}`;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, token, { mode: 0o600 });
  await chmod(file, 0o600); // writeFile keeps the mode of an existing file
  return token;
}

/** Constant-time comparison (hashes first, so lengths never leak either). */
export function adminTokenMatches(presented: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

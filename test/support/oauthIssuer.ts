import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from "jose";

/**
 * A local token issuer for the OAuth tests, standing in for Entra: keys generated in the test, its
 * JWKS served on loopback (counting fetches, so a test can see a refresh happen), and assertions
 * signed as the IdP would sign them.
 */

export const ISSUER = "https://login.example.test/tenant-0001/v2.0";
export const AUDIENCE = "api://connector-test";
export const SUBJECT = "sync-fabric-object-id";
export const TENANT = "tenant-0001";

type Key = { kid: string; alg: string; privateKey: CryptoKey; jwk: JWK };

export type LocalIssuer = {
  url: string;
  /** How many times the JWKS was fetched. */
  fetches: () => number;
  /** Publishes a new key (rotation); its kid is returned. */
  rotate(): Promise<string>;
  /** A signed assertion; `claims` override or remove (undefined) the defaults. */
  assertion(
    claims?: Record<string, unknown>,
    options?: { kid?: string; alg?: string; key?: CryptoKey },
  ): Promise<string>;
  /** The env that trusts this issuer through its JWKS URL. */
  env(): Record<string, string>;
  jwks(): { keys: JWK[] };
  close(): Promise<void>;
};

async function makeKey(kid: string, alg: "RS256" | "ES256"): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } };
}

/** `clock`: the time the issuer signs at (the service's ManualClock, so that both agree). */
export async function startLocalIssuer(clock: { now(): Date } = { now: () => new Date() }): Promise<LocalIssuer> {
  const keys: Key[] = [await makeKey("k1", "RS256")];
  const unpublished: Key[] = [];
  let fetches = 0;
  let rotations = 0;
  const jwks = () => ({ keys: keys.map((k) => k.jwk) });
  const server: Server = createServer((req, res) => {
    fetches += 1;
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify(jwks()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/discovery/v2.0/keys`;
  const find = (kid: string) => [...keys, ...unpublished].find((k) => k.kid === kid);
  return {
    url,
    fetches: () => fetches,
    async rotate() {
      rotations += 1;
      const key = await makeKey(`rotated-${rotations}`, "ES256");
      keys.push(key);
      return key.kid;
    },
    async assertion(claims = {}, options = {}) {
      const kid = options.kid ?? "k1";
      const key = find(kid) ?? keys[0]!;
      const now = Math.floor(clock.now().getTime() / 1000);
      const defaults: JWTPayload = {
        iss: ISSUER,
        aud: AUDIENCE,
        sub: SUBJECT,
        tid: TENANT,
        iat: now,
        nbf: now,
        exp: now + 3600,
        jti: `jti-${Math.random().toString(36).slice(2)}`,
      };
      const payload = Object.fromEntries(
        Object.entries({ ...defaults, ...claims }).filter(([, v]) => v !== undefined),
      ) as JWTPayload;
      return new SignJWT(payload)
        .setProtectedHeader({ alg: options.alg ?? key.alg, kid })
        .sign(options.key ?? key.privateKey);
    },
    env() {
      return {
        OAUTH_JWT_ISSUER: ISSUER,
        OAUTH_JWT_AUDIENCE: AUDIENCE,
        OAUTH_JWT_SUBJECT: SUBJECT,
        OAUTH_JWT_TENANT_ID: TENANT,
        OAUTH_JWT_JWKS_URL: url,
      };
    },
    jwks,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

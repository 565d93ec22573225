import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AuthorizationCodes } from "../../src/auth/oauth/authorizationCode.js";
import { OAuthClients } from "../../src/auth/oauth/clients.js";
import { OAuthTokenService } from "../../src/auth/oauth/tokenService.js";
import { ManualClock } from "../../src/clock.js";
import { OAuthGrantRepository } from "../../src/db/auth/oauthGrantRepository.js";
import { OAuthRepository } from "../../src/db/auth/oauthRepository.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

/**
 * Codes and refresh tokens do not pile up (issue 37's leftover): a family goes once every one of
 * its refresh tokens has been expired for a day, and a code once it has expired with no family
 * left. A family still alive keeps its rotated tokens, so a stolen copy used late still revokes it.
 */

const DAY = 86_400_000;

describe("OAuth: spent refresh token families and codes are purged", () => {
  let database: TestDatabase;
  let grants: OAuthGrantRepository;
  let clientId: string;
  const clock = new ManualClock({ now: () => new Date("2026-11-28T12:00:00Z") });
  const ago = (ms: number) => new Date(clock.now().getTime() - ms);
  const hash = () => randomBytes(32);

  const code = (familyId: string, expiresAt: Date) =>
    grants.createCode(hash(), {
      clientId,
      redirectUri: "https://okta.example.test/cb",
      codeChallenge: null,
      codeChallengeMethod: null,
      expiresAt,
      familyId,
      approvedBy: "admin@example.com",
      createdAt: new Date(expiresAt.getTime() - 600_000),
    });
  const refresh = async (familyId: string, expiresAt: Date, rotated = false) => {
    const tokenHash = hash();
    await grants.issueRefreshToken(tokenHash, { clientId, familyId, createdAt: ago(40 * DAY), expiresAt });
    if (rotated)
      await database.db.query(`UPDATE oauth_refresh_tokens SET rotated_at = $2 WHERE token_hash = $1`, [
        tokenHash,
        ago(DAY),
      ]);
    return tokenHash;
  };
  const families = async () =>
    (await database.db.query<{ family_id: string }>(`SELECT DISTINCT family_id FROM oauth_refresh_tokens`)).map(
      (r) => r.family_id,
    );
  const codeFamilies = async () =>
    (await database.db.query<{ family_id: string }>(`SELECT family_id FROM oauth_authorization_codes`)).map(
      (r) => r.family_id,
    );

  const alive = randomUUID();
  const spent = randomUUID();
  const neverExchanged = randomUUID();
  const pending = randomUUID();
  let rotatedCopy: Buffer;

  beforeAll(async () => {
    database = await createTestDatabase();
    grants = new OAuthGrantRepository(database.db);
    clientId = (await new OAuthRepository(database.db).createClient("okta", "secret")).id;
    // alive: its first token rotated and expired long ago, its current one good for days.
    await code(alive, ago(30 * DAY));
    rotatedCopy = await refresh(alive, ago(10 * DAY), true);
    await refresh(alive, new Date(clock.now().getTime() + 5 * DAY));
    // spent: every refresh token expired two days ago.
    await code(spent, ago(40 * DAY));
    await refresh(spent, ago(3 * DAY), true);
    await refresh(spent, ago(2 * DAY));
    // A code approved and never exchanged, expired two days ago; another still within its ten minutes.
    await code(neverExchanged, ago(2 * DAY));
    await code(pending, new Date(clock.now().getTime() + 300_000));
  });
  afterAll(async () => database?.drop());

  it("drops the spent family and the expired orphan code when a token is issued; keeps what can still be used", async () => {
    const repository = new OAuthRepository(database.db);
    const codes = new AuthorizationCodes(repository, grants, clock);
    await codes.issueRefreshToken(clientId, randomUUID(), 30);
    // The token service's hourly purge, run by the next access token it issues, drops them.
    const tokens = new OAuthTokenService({
      repository,
      clock,
      accessTokenMinutes: 60,
      assertionClientName: "entra-wif",
      codes,
    });
    const { secret } = await new OAuthClients(repository, clock).create("okta-purge");
    await tokens.clientCredentials({ clientId: "okta-purge", clientSecret: secret });
    await vi.waitFor(async () => expect(await families()).not.toContain(spent), { timeout: 15_000, interval: 100 });
    expect((await families()).sort()).toEqual(expect.arrayContaining([alive]));
    expect(await families()).toHaveLength(2); // alive and the one just issued
    expect((await codeFamilies()).sort()).toEqual([alive, pending].sort());
    // The live family's rotated token is still known: used again, it is a reuse, which revokes the family.
    expect(await grants.useRefreshToken(rotatedCopy, clock.now())).toMatchObject({ kind: "reused", familyId: alive });
  });
});

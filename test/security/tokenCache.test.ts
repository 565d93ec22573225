import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateToken, hashToken, ScimTokenVerifier } from "../../src/auth/scimTokens.js";
import { TokenRepository } from "../../src/db/auth/tokenRepository.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

/** The real repository on a real database, counting the lookup queries the verifier makes. */
class CountingTokens extends TokenRepository {
  lookups = 0;
  override async findActiveByHashes(tokenHashes: readonly Buffer[]) {
    this.lookups += 1;
    return super.findActiveByHashes(tokenHashes);
  }
}

describe("SCIM token verifier cache under a flood of bad tokens", () => {
  let database: TestDatabase;
  let tokens: CountingTokens;
  let good: string;
  let now = 1_000_000;
  const clock = () => now;

  beforeAll(async () => {
    database = await createTestDatabase();
    tokens = new CountingTokens(database.db);
    good = generateToken();
    await tokens.create("okta", hashToken(good), good.slice(0, 12));
  });
  afterAll(async () => {
    await database?.drop();
  });

  it("distinct bad tokens never evict a good one, and a repeated bad token is answered from memory", async () => {
    const verifier = new ScimTokenVerifier(tokens, undefined, { negativeLimit: 100, now: clock });
    expect(await verifier.verify(good)).toBe(true);
    const afterGood = tokens.lookups;

    // Far more distinct bad tokens than the negative cache holds (and than the old shared cache did: 1,000).
    for (let i = 0; i < 1_200; i++) expect(await verifier.verify(`bad-${i}-${"x".repeat(20)}`)).toBe(false);
    expect(tokens.lookups).toBe(afterGood + 1_200);

    // The good token is still cached: no lookup.
    const beforeGood = tokens.lookups;
    expect(await verifier.verify(good)).toBe(true);
    expect(tokens.lookups).toBe(beforeGood);

    // One bad token tried 200 times costs one lookup while its answer is fresh.
    const repeated = "attacker-guess-0123456789";
    for (let i = 0; i < 200; i++) expect(await verifier.verify(repeated)).toBe(false);
    expect(tokens.lookups).toBe(beforeGood + 1);

    // After the TTL both are looked up again (a revoked token stops working, a new one starts).
    now += 10_001;
    expect(await verifier.verify(repeated)).toBe(false);
    expect(await verifier.verify(good)).toBe(true);
    expect(tokens.lookups).toBe(beforeGood + 3);
  });

  it("a token created after it was first refused is accepted once the refusal is stale", async () => {
    const verifier = new ScimTokenVerifier(tokens, undefined, { now: clock });
    const later = generateToken();
    expect(await verifier.verify(later)).toBe(false);
    await tokens.create("entra", hashToken(later), later.slice(0, 12));
    now += 10_001;
    expect(await verifier.verify(later)).toBe(true);
  });

  it("unknown tokens sent at once are looked up together, and a valid one among a flood of guesses passes", async () => {
    const verifier = new ScimTokenVerifier(tokens, undefined, { now: clock });
    const fresh = generateToken();
    await tokens.create("flooded", hashToken(fresh), fresh.slice(0, 12));
    const before = tokens.lookups;
    const guesses = Array.from({ length: 300 }, (_, i) => verifier.verify(`flood-${i}-${"z".repeat(20)}`));
    const answers = await Promise.all([...guesses.slice(0, 150), verifier.verify(fresh), ...guesses.slice(150)]);
    expect(answers.filter((a) => a === true)).toHaveLength(1);
    expect(answers[150]).toBe(true);
    // The first guess's own query, then one for the other 300 that arrived while it ran.
    expect(tokens.lookups - before).toBe(2);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { adminQuery, createTestDatabase, type TestDatabase } from "../support/db.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * An address the failed-auth throttle already refuses costs no token lookup: its guesses are
 * answered 429 from memory, so a flood of made-up tokens cannot keep the pool that IdP writes
 * use busy. The connector runs as a real child process with one HTTP pool connection; lookups
 * are counted by PostgreSQL itself (pg_stat_user_tables for scim_tokens), read once a later
 * request's own table scan has been flushed by that same connection.
 */

const PER_ADDRESS = 3;
const BLOCKED = "198.51.100.7";

describe("the throttle is asked before a token is looked up", () => {
  let database: TestDatabase;
  let connector: ConnectorProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    const mappingFile = await writeMappingFile();
    connector = await spawnConnector({
      DATABASE_URL: database.url,
      DATABASE_POOL_SIZE: "1",
      ADMIN_TOKEN,
      SCIM_TOKEN: IDP_TOKEN,
      MAPPING_FILE: mappingFile,
      RECONCILE_WORKERS: "0",
      RESYNC_CRON: "off",
      AUTH_THROTTLE_PER_ADDRESS: String(PER_ADDRESS),
    });
  }, 90_000);
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await database?.drop();
  });

  const scans = async (table: string) =>
    Number(
      (
        await adminQuery<{ n: string }>(
          database.url,
          `SELECT seq_scan + coalesce(idx_scan, 0) AS n FROM pg_stat_user_tables WHERE relname = '${table}'`,
        )
      )[0]!.n,
    );

  /** scim_tokens' scans once everything the service's connection did before now is in the statistics. */
  async function tokenLookupsSoFar(): Promise<number> {
    const before = await scans("idp_users");
    const marker = await fetch(`${connector!.url}/scim/v2/Users?count=1`, {
      headers: { Authorization: `Bearer ${IDP_TOKEN}` },
    });
    expect(marker.status).toBe(200);
    await eventually("the marker request's scan in the statistics", async () => (await scans("idp_users")) > before);
    return scans("scim_tokens");
  }

  const guess = (n: number) =>
    fetch(`${connector!.url}/scim/v2/Users?count=1`, {
      headers: { Authorization: `Bearer made-up-token-${n}-${Math.random()}`, "X-Forwarded-For": BLOCKED },
    }).then((res) => res.status);

  it("past the limit, 30 more made-up tokens from that address cost no lookup", { timeout: 60_000 }, async () => {
    const start = await tokenLookupsSoFar();
    const first: number[] = [];
    for (let n = 0; n <= PER_ADDRESS; n++) first.push(await guess(n));
    expect(first).toEqual([...Array<number>(PER_ADDRESS).fill(401), 429]);
    const crossed = await tokenLookupsSoFar();
    // Each of those was looked up (the one that crossed the limit too): the counter counts.
    expect(crossed - start).toBe(PER_ADDRESS + 1);

    const later: number[] = [];
    for (let n = 0; n < 30; n++) later.push(await guess(100 + n));
    expect(new Set(later)).toEqual(new Set([429]));
    expect((await tokenLookupsSoFar()) - crossed).toBe(0);
  });
});

import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { loadEnv } from "../../src/config/env.js";
import { openDatabase } from "../../src/db/dataSource.js";
import type { Database } from "../../src/db/database.js";
import { createExportPoller, type PlatformExportPoller } from "../../src/platformRecord/exportPoller.js";
import { platformImportOptions } from "../../src/platformRecord/importer.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { eventually } from "../support/wait.js";
import { startStack } from "../support/stack.js";
import { S3RVER_KEYS, startS3, type TestS3 } from "../support/s3.js";

/**
 * The platform's daily Security Event export read from a real S3-compatible server (s3rver): each
 * object (key and ETag) read once, whichever of two replicas polls and however often; a rewritten
 * object read again (its events already known); an object that is not the report left unread.
 */

const HEADER = "Time (UTC),Actor,Event,Account,IP Address,Details\r\n";
const day = (date: string, accounts: string[]) =>
  HEADER +
  accounts
    .map((a, i) => `${date}T0${i}:00:00.000Z,ops-admin@example.com,Added Account,${a},10.0.0.1,\r\n`)
    .reverse()
    .join("");

describe("the daily S3 export", () => {
  let s3: TestS3;
  let database: TestDatabase;
  let second: Database;
  let replicas: PlatformExportPoller[];
  let analysed = 0;

  beforeAll(async () => {
    s3 = await startS3();
    await s3.bucket("security-events");
    database = await createTestDatabase();
    second = await openDatabase({ url: database.url, poolSize: 3, applicationName: "scim-connector-test" });
    // Credentials through the SDK's default chain, as a deployment gives them (never read by the connector).
    Object.assign(process.env, S3RVER_KEYS);
    const env = loadEnv({
      SECURITY_EVENTS_S3_URI: "s3://security-events/braze/",
      SECURITY_EVENTS_S3_ENDPOINT: s3.endpoint,
      SECURITY_EVENTS_S3_REGION: "us-east-1",
    });
    const analyse = async () => {
      analysed++;
      return {
        ownWrites: 0,
        candidates: 0,
        outsideChanges: 0,
        removedByHand: 0,
        activity: 0,
        catalogueEdits: 0,
        ignored: 0,
      };
    };
    replicas = [database.db, second].map((db) =>
      createExportPoller(env, { ...platformImportOptions(env), db, clock: systemClock, analyse })!,
    );
  });
  afterAll(async () => {
    await second?.close();
    await database?.drop();
    await s3?.stop();
  });

  const imports = () =>
    database.db.query<{ source: string; imported: number; duplicates: number; actor: string | null }>(
      `SELECT source, imported, duplicates, actor FROM platform_event_imports ORDER BY id`,
    );
  const events = async () =>
    (await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM platform_events`))[0]!.n;
  const pollBoth = () => Promise.all(replicas.map((r) => r.poll()));

  it("reads each object once across two replicas and two polls", async () => {
    await s3.put("security-events", "braze/2026-12-04.csv", day("2026-12-04", ["a@example.com", "b@example.com"]));
    await s3.put("security-events", "braze/2026-12-05.csv", day("2026-12-05", ["c@example.com"]));
    await s3.put("security-events", "elsewhere/2026-12-05.csv", day("2026-12-05", ["x@example.com"]));

    await pollBoth();
    await pollBoth();
    expect(await imports()).toEqual([
      { source: "s3://security-events/braze/2026-12-04.csv", imported: 2, duplicates: 0, actor: null },
      { source: "s3://security-events/braze/2026-12-05.csv", imported: 1, duplicates: 0, actor: null },
    ]);
    expect(await events()).toBe(3);
    expect(analysed).toBe(1);
    const objects = await database.db.query<{ key: string; import_id: string | null }>(
      `SELECT key, import_id FROM platform_export_objects ORDER BY key`,
    );
    expect(objects.map((o) => [o.key, o.import_id !== null])).toEqual([
      ["braze/2026-12-04.csv", true],
      ["braze/2026-12-05.csv", true],
    ]);
  });

  it("reads the next day's object alone, and a rewritten object again (its known events counted once)", async () => {
    await s3.put("security-events", "braze/2026-12-06.csv", day("2026-12-06", ["d@example.com"]));
    await s3.put("security-events", "braze/2026-12-05.csv", day("2026-12-05", ["c@example.com", "late@example.com"]));
    await pollBoth();
    await pollBoth();
    expect((await imports()).slice(2)).toEqual([
      { source: "s3://security-events/braze/2026-12-05.csv", imported: 1, duplicates: 1, actor: null },
      { source: "s3://security-events/braze/2026-12-06.csv", imported: 1, duplicates: 0, actor: null },
    ]);
    expect(await events()).toBe(5);
  });

  it("reads nothing while another replica holds the export's lock", async () => {
    await s3.put("security-events", "braze/2026-12-07.csv", day("2026-12-07", ["e@example.com"]));
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      await other.query(`SELECT pg_advisory_lock(7429044)`); // EXPORT_POLL_LOCK, as another replica's poll holds it
      expect(await replicas[0]!.poll()).toBeUndefined();
      expect(await events()).toBe(5);
    } finally {
      await other.end();
    }
    expect(await replicas[0]!.poll()).toMatchObject({ objects: 1, imported: 1 });
    expect(await events()).toBe(6);
  });

  it("leaves an object that is not the report unread (and reads nothing of it), poll after poll", async () => {
    await s3.put("security-events", "braze/readme.csv", "Name,Email\r\nKate,kate@example.com\r\n");
    const [first] = await Promise.all([replicas[0]!.poll()]);
    expect(first).toMatchObject({ objects: 0, refused: 1 });
    expect((await imports()).length).toBe(5);
    expect(await replicas[1]!.poll()).toMatchObject({ refused: 1 });
    expect(await events()).toBe(6);
  });

  it("two replicas' running workers read a new object once between them", async () => {
    for (const replica of replicas) replica.start();
    try {
      await s3.put("security-events", "braze/2026-12-08.csv", day("2026-12-08", ["f@example.com", "g@example.com"]));
      for (const replica of replicas) replica.notify();
      await eventually("the new day imported", async () => (await events()) === 8);
      for (const replica of replicas) replica.notify();
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
    }
    const sources = (await imports()).map((i) => i.source);
    expect(sources.filter((s) => s.endsWith("2026-12-08.csv"))).toHaveLength(1);
    expect(new Set(sources).size).toBe(sources.length - 1); // only the rewritten 2026-12-05 twice
    expect(await events()).toBe(8);
  });
});

describe("the service polls the export in its scheduler role", () => {
  it("imports the bucket's objects once started with SECURITY_EVENTS_S3_URI", async () => {
    const s3 = await startS3();
    await s3.bucket("exports");
    await s3.put("exports", "events/2026-12-04.csv", day("2026-12-04", ["a@example.com", "b@example.com"]));
    Object.assign(process.env, S3RVER_KEYS);
    const stack = await startStack({
      workers: false,
      env: {
        SECURITY_EVENTS_S3_URI: "s3://exports/events/",
        SECURITY_EVENTS_S3_ENDPOINT: s3.endpoint,
        SECURITY_EVENTS_S3_REGION: "us-east-1",
      },
    });
    try {
      const imported = await eventually("the export imported", async () => {
        const rows = await stack.database.db.query<{ source: string; imported: number }>(
          `SELECT source, imported FROM platform_event_imports`,
        );
        return rows.length ? rows : undefined;
      });
      expect(imported).toEqual([{ source: "s3://exports/events/2026-12-04.csv", imported: 2 }]);
    } finally {
      await stack.close();
      await s3.stop();
    }
  });
});

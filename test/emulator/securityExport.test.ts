import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { emulatorCommandOptions } from "../../src/cli/emulator.js";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { startS3, S3RVER_CREDENTIALS, type TestS3 } from "../support/s3.js";
import { eventually } from "../support/wait.js";
import { startClient, type Client } from "./harness.js";

/** The daily Security Event export to S3, against a real S3-compatible server (s3rver). */

const START = new Date("2026-12-06T22:00:00.000Z");
const HOUR = 3_600_000;
const HEADER = "Time (UTC),Actor,Event,Account,IP Address,Details";
const BUCKET = "platform-security";
const key = (day: string) => `security/daily/security-events-${day}.csv`;

let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3();
  await s3.bucket(BUCKET);
});
afterAll(() => s3.stop());

describe("the daily export: one CSV per UTC day of the emulator's clock", () => {
  let c: Client | undefined;
  afterEach(async () => {
    await c?.close();
    c = undefined;
  });

  const start = async (prefix: string, checkIntervalMs?: number) => {
    c = await startClient({
      clock: { now: () => START },
      securityExport: {
        uri: `s3://${BUCKET}/${prefix}`,
        endpoint: s3.endpoint,
        credentials: S3RVER_CREDENTIALS,
        ...(checkIntervalMs ? { checkIntervalMs } : {}),
      },
    });
    return c;
  };
  const signIn = (client: Client, email: string) =>
    client.control("POST", "/dashboard", { action: "sign-in", email, actor: email });
  const addAccount = (client: Client, email: string) =>
    client.control("POST", "/dashboard", { action: "add-account", email, actor: "ops@example.com" });

  it("a day is written once the clock passes its midnight, with that day's events only", async () => {
    const client = await start("security/daily/");
    await addAccount(client, "dec6@example.com");
    await client.control("POST", "/clock", { advanceMs: 3 * HOUR }); // 01:00 on the 7th
    await addAccount(client, "dec7@example.com");
    // The 7th has events but is not over: a check now writes nothing (the 6th was claimed by the move's check).
    expect(await client.emulator.securityExport!.exportFinishedDays()).toEqual([]);

    const dec6 = await eventually("the 6th's export", async () =>
      (await s3.keys(BUCKET, "security/daily/")).includes(key("2026-12-06")),
    );
    expect(dec6).toBe(true);
    expect(await s3.text(BUCKET, key("2026-12-06"))).toBe(
      `${HEADER}\r\n2026-12-06T22:00:00.000Z,ops@example.com,Added Account,dec6@example.com,127.0.0.1,\r\n`,
    );
    // The 7th is not over: not written yet.
    expect(await s3.keys(BUCKET, "security/daily/")).toEqual([key("2026-12-06")]);

    await client.control("POST", "/clock", { advanceMs: 24 * HOUR }); // 01:00 on the 8th
    await eventually("the 7th's export", async () =>
      (await s3.keys(BUCKET, "security/daily/")).includes(key("2026-12-07")),
    );
    expect(await s3.text(BUCKET, key("2026-12-07"))).toBe(
      `${HEADER}\r\n2026-12-07T01:00:00.000Z,ops@example.com,Added Account,dec7@example.com,127.0.0.1,\r\n`,
    );
    expect(await s3.keys(BUCKET, "security/daily/")).toEqual([key("2026-12-06"), key("2026-12-07")]);
  });

  it("the timer writes a finished day when the clock moved without the control plane", async () => {
    const client = await start("timer", 50);
    await addAccount(client, "timer@example.com");
    client.emulator.state.clock.advance(3 * HOUR);
    await eventually("the timer's export", async () => (await s3.keys(BUCKET, "timer/")).length > 0);
    expect(await s3.keys(BUCKET, "timer/")).toEqual(["timer/security-events-2026-12-06.csv"]);
  });

  it("POST /_emulator/security-events/export writes every day with events so far, or the day asked", async () => {
    const client = await start("now");
    await addAccount(client, "ada@example.com");
    await client.control("POST", "/clock", { advanceMs: 3 * HOUR });
    await signIn(client, "ada@example.com");

    const all = await client.control("POST", "/security-events/export");
    expect(all.status).toBe(200);
    expect(all.body).toEqual({
      bucket: BUCKET,
      keys: ["now/security-events-2026-12-06.csv", "now/security-events-2026-12-07.csv"],
    });
    // Today's so far.
    expect(await s3.text(BUCKET, "now/security-events-2026-12-07.csv")).toBe(
      `${HEADER}\r\n2026-12-07T01:00:00.000Z,ada@example.com,Signed In,ada@example.com,127.0.0.1,\r\n`,
    );

    const one = await client.control("POST", "/security-events/export", { day: "2026-12-05" });
    expect(one.body.keys).toEqual(["now/security-events-2026-12-05.csv"]);
    expect(await s3.text(BUCKET, "now/security-events-2026-12-05.csv")).toBe(`${HEADER}\r\n`);

    for (const day of ["2026-12-32", "yesterday", 20261206])
      expect((await client.control("POST", "/security-events/export", { day })).body.message).toBe(
        "day must be a date, YYYY-MM-DD",
      );
    const future = await client.control("POST", "/security-events/export", { day: "2026-12-08" });
    expect([future.status, future.body.message]).toEqual([
      400,
      "day 2026-12-08 is after the emulator's current day 2026-12-07",
    ]);
  });

  it("an export to a bucket that does not exist answers 502 naming the bucket", async () => {
    c = await startClient({
      securityExport: { uri: "s3://no-such-bucket/x", endpoint: s3.endpoint, credentials: S3RVER_CREDENTIALS },
    });
    await addAccount(c, "ada@example.com");
    const res = await c.control("POST", "/security-events/export");
    expect(res.status).toBe(502);
    expect(res.body.message).toMatch(/^The export to s3:\/\/no-such-bucket failed: .*NoSuchBucket/);
  });

  it("without --security-export the POST answers 409 saying how to turn it on", async () => {
    c = await startClient();
    const res = await c.control("POST", "/security-events/export");
    expect([res.status, res.body.message]).toEqual([
      409,
      "No security export: start the emulator with --security-export s3://bucket/prefix",
    ]);
  });
});

describe("scim-connector emulator --security-export", () => {
  it("takes s3://bucket/prefix and EMULATOR_S3_ENDPOINT / EMULATOR_S3_REGION", () => {
    const env = loadEnv({ EMULATOR_S3_ENDPOINT: "http://127.0.0.1:4568", EMULATOR_S3_REGION: "eu-west-1" });
    expect(emulatorCommandOptions(env, ["--security-export", "s3://bucket-a/some/prefix"]).securityExport).toEqual({
      uri: "s3://bucket-a/some/prefix",
      endpoint: "http://127.0.0.1:4568",
      region: "eu-west-1",
    });
    expect(emulatorCommandOptions(loadEnv({}), []).securityExport).toBeUndefined();
  });

  it("a URI that is not s3://bucket/prefix is a configuration error naming the flag", () => {
    for (const uri of ["https://bucket/x", "s3://", "s3://UPPER/x"]) {
      const attempt = () => emulatorCommandOptions(loadEnv({}), ["--security-export", uri]);
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(/--security-export: must be s3:\/\/bucket\/prefix/);
    }
  });
});

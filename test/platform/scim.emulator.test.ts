import { createServer } from "node:net";
import { Writable } from "node:stream";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { RATE_LIMITS } from "../../src/emulator/pipeline/rateLimits.js";
import type { DesiredDashboardUser } from "../../src/mapping/types.js";
import { HttpTransport, noRetry, type HttpOutcome, type RetryPolicy } from "../../src/platform/transport.js";
import { PlatformScimClient } from "../../src/platform/scim.js";
import type { PlatformScimPort } from "../../src/reconcile/ports.js";
import { addFault, emulatorCounts } from "../support/emulator.js";

/**
 * The SCIM client against the emulator over real HTTP: the happy path, the platform's errors,
 * and every failure the transport must sort into ok / http_error / rate_limited / uncertain /
 * unreachable, with retries only where they are safe.
 */

const fastRetry: RetryPolicy = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRateLimitWaitMs: 60_000 };

let emulator: RunningEmulator;
let clock: ManualClock;
let slept: number[];

beforeAll(async () => {
  clock = new ManualClock();
  emulator = await startEmulator({ port: 0, clock });
});
afterAll(async () => {
  await emulator.close();
});
beforeEach(async () => {
  await control("POST", "/_emulator/reset");
  slept = [];
});

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${emulator.url}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  const text = await res.text();
  return text ? JSON.parse(text) : undefined;
}

/** A transport whose rate-limit waits move the shared clock instead of sleeping through them. */
function transport(options: { timeoutMs?: number; retry?: RetryPolicy; baseUrl?: string } = {}): HttpTransport {
  return new HttpTransport({
    baseUrl: options.baseUrl ?? emulator.url,
    timeoutMs: options.timeoutMs ?? 5_000,
    retry: options.retry ?? fastRetry,
    clock,
    sleep: async (ms) => {
      slept.push(ms);
      if (ms >= 500) clock.advance(ms);
      else await new Promise((r) => setTimeout(r, ms));
    },
  });
}

/** Typed as the reconciler's port as well, so `npm run typecheck` proves the client satisfies it. */
function client(
  options: { timeoutMs?: number; retry?: RetryPolicy; token?: string; http?: HttpTransport; baseUrl?: string } = {},
): PlatformScimClient & PlatformScimPort {
  return new PlatformScimClient({
    transport: options.http ?? transport(options),
    scimToken: options.token ?? "dev-scim-token",
    requestOrigin: "scim-connector-test",
    ...(options.retry ? { retry: options.retry } : {}),
  });
}

const counter = () => {
  const calls: number[] = [];
  return { calls, beforeSend: async ({ attempt }: { attempt: number }) => void calls.push(attempt) };
};

const ada: DesiredDashboardUser = {
  userName: "ada@example.com",
  givenName: "Ada",
  familyName: "Lovelace",
  department: "engineering",
  companyPermissions: ["admin"],
  workspaces: [
    {
      appGroupName: "EU Production",
      appGroupPermissions: ["basic_access", "send_campaigns_canvases"],
      appGroupPermissionSets: ["Read only"],
      team: [{ teamName: "Lifecycle", teamPermissions: ["basic_access"] }],
    },
    { appGroupName: "Staging", appGroupPermissions: ["admin"], appGroupPermissionSets: [], team: [] },
  ],
};

function expectOk(outcome: HttpOutcome) {
  expect(outcome.kind, JSON.stringify(outcome)).toBe("ok");
  if (outcome.kind !== "ok") throw new Error("not ok");
  return outcome;
}

describe("PlatformScimClient against the emulator", () => {
  it("creates, reads, finds, replaces and deletes, and reads resources back in the desired shape", async () => {
    const scim = client();
    const created = expectOk(await scim.createUser(ada));
    expect(created.status).toBe(201);
    const account = scim.readResource(created.body)!;
    expect(account.id).toMatch(/.+/);
    expect(account.user).toEqual(ada);

    expect(scim.readResource(expectOk(await scim.getUser(account.id)).body)).toEqual(account);
    expect(scim.readList(expectOk(await scim.findUserByUserName("ADA@example.com")).body)).toEqual([account]);
    expect(scim.readList(expectOk(await scim.findUserByUserName('nobody"@example.com')).body)).toEqual([]);

    const changed: DesiredDashboardUser = {
      ...ada,
      department: "marketing",
      companyPermissions: [],
      workspaces: [ada.workspaces[1]!],
    };
    const replaced = expectOk(await scim.replaceUser(account.id, changed));
    expect(scim.readResource(replaced.body)).toEqual({ id: account.id, user: changed, identifiers: [] });

    const deleted = expectOk(await scim.deleteUser(account.id));
    expect(deleted.status).toBe(204);
    expect(await scim.getUser(account.id)).toMatchObject({ kind: "http_error", status: 404 });
    expect(await scim.deleteUser(account.id)).toMatchObject({
      kind: "http_error",
      status: 404,
      body: { detail: "User not found", status: 404 },
    });
  });

  it("answers a duplicate create with 409 and the platform's detail", async () => {
    const scim = client();
    expectOk(await scim.createUser(ada));
    expect(await scim.createUser(ada)).toMatchObject({
      kind: "http_error",
      status: 409,
      attempts: 1,
      body: { detail: "User already exists in the database." },
    });
  });

  it("sends the SCIM token: a wrong one is a 401, not retried", async () => {
    const { calls, beforeSend } = counter();
    expect(await client({ token: "wrong" }).getUser("x", beforeSend)).toMatchObject({
      kind: "http_error",
      status: 401,
    });
    expect(calls).toEqual([1]);
  });

  it("runs beforeSend before each attempt; when it throws nothing is sent", async () => {
    const scim = client();
    await expect(scim.createUser(ada, () => Promise.reject(new Error("no budget")))).rejects.toThrow("no budget");
    expect(emulator.state.dashboardUsers.byId.size).toBe(0);
  });
});

describe("transport outcomes and retries over real HTTP", () => {
  it("retries a 5xx on GET and succeeds, one beforeSend per attempt", async () => {
    const scim = client();
    const id = scim.readResource(expectOk(await scim.createUser(ada)).body)!.id;
    await addFault(emulator.url, { method: "GET", path: "/scim/v2/Users", status: 503, count: 2 });
    const { calls, beforeSend } = counter();
    expect(expectOk(await scim.getUser(id, beforeSend)).attempts).toBe(3);
    expect(calls).toEqual([1, 2, 3]);
  });

  it("gives up after maxAttempts with the last 5xx", async () => {
    await addFault(emulator.url, { method: "GET", path: "/scim/v2/Users", status: 500 });
    expect(await client().getUser("x")).toMatchObject({ kind: "http_error", status: 500, attempts: 3 });
  });

  it("does not retry a 5xx to a POST: the create is uncertain", async () => {
    await addFault(emulator.url, { method: "POST", path: "/scim/v2/Users", status: 502, count: 1 });
    const { calls, beforeSend } = counter();
    expect(await client().createUser(ada, beforeSend)).toEqual({
      kind: "uncertain",
      reason: "http_502",
      status: 502,
      attempts: 1,
    });
    expect(calls).toEqual([1]);
  });

  it("reports a dropped connection on a POST as uncertain, without a second POST", async () => {
    await addFault(emulator.url, { method: "POST", path: "/scim/v2/Users", dropConnection: true, count: 1 });
    const { calls, beforeSend } = counter();
    const outcome = await client().createUser(ada, beforeSend);
    expect(outcome).toMatchObject({ kind: "uncertain", attempts: 1 });
    expect(calls).toEqual([1]);
  });

  it("retries a dropped connection on a GET", async () => {
    await addFault(emulator.url, { method: "GET", path: "/scim/v2/Users", dropConnection: true, count: 1 });
    expect(expectOk(await client().findUserByUserName("ada@example.com")).attempts).toBe(2);
  });

  it("a POST that times out is uncertain; the platform may have applied it, so the caller looks it up", async () => {
    await addFault(emulator.url, { method: "POST", path: "/scim/v2/Users", delayMs: 1_500, count: 1 });
    const scim = client({ timeoutMs: 750 });
    const outcome = await scim.createUser(ada);
    expect(outcome).toEqual({ kind: "uncertain", reason: "timeout", attempts: 1 });
    // The emulator carries on after the delay and creates the account: exactly one, found by lookup.
    await vi.waitFor(() => expect(emulator.state.dashboardUsers.byId.size).toBeGreaterThan(0), {
      timeout: 30_000,
      interval: 50,
    });
    const found = scim.readList(expectOk(await scim.findUserByUserName(ada.userName)).body);
    expect(found.map((a) => a.user)).toEqual([ada]);
    expect(emulator.state.dashboardUsers.byId.size).toBe(1);
  });

  it("retries a GET that timed out", async () => {
    await addFault(emulator.url, { method: "GET", path: "/scim/v2/Users", delayMs: 1_500, count: 1 });
    expect(expectOk(await client({ timeoutMs: 750 }).findUserByUserName(ada.userName)).attempts).toBe(2);
  });

  it("reports a platform nobody listens on as unreachable, after bounded attempts", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((r) => server.close(() => r()));
    const { calls, beforeSend } = counter();
    const outcome = await client({ baseUrl: `http://127.0.0.1:${port}` }).createUser(ada, beforeSend);
    expect(outcome).toEqual({ kind: "unreachable", reason: "ECONNREFUSED", attempts: 3 });
    expect(calls).toEqual([1, 2, 3]);
  });
});

describe("429: the whole family pauses until the platform says", () => {
  it("honours the SCIM daily limit's Retry-After: later calls are refused locally until the reset", async () => {
    const http = transport({ retry: noRetry });
    const scim = client({ http });
    for (let i = 0; i < RATE_LIMITS.scimDaily.limit; i++)
      emulator.state.rateLimiter.take(RATE_LIMITS.scimDaily, emulator.state.nowMs());

    const refused = await scim.getUser("x");
    expect(refused).toMatchObject({ kind: "rate_limited", sent: true, attempts: 1 });
    const until = (refused as { until: Date }).until;
    const nextUtcDay = new Date(emulator.state.nowMs());
    nextUtcDay.setUTCHours(24, 0, 0, 0);
    expect(Math.abs(until.getTime() - nextUtcDay.getTime())).toBeLessThan(2_000);
    expect(http.pausedUntil("scim")).toEqual(until);
    expect(http.pausedUntil("email")).toBeUndefined();

    const before = await emulatorCounts(emulator.url);
    const { calls, beforeSend } = counter();
    expect(await scim.createUser(ada, beforeSend)).toEqual({ kind: "rate_limited", until, sent: false, attempts: 0 });
    expect(calls).toEqual([]);
    expect(await emulatorCounts(emulator.url)).toEqual(before);

    clock.advance(until.getTime() - clock.now().getTime() + 1_000);
    expect(http.pausedUntil("scim")).toBeUndefined();
    expectOk(await scim.createUser(ada));
  });

  it("a pause learned while beforeSend ran (the debit waited on its lock) is waited out before sending", async () => {
    const http = transport();
    const scim = client({ http });
    let pausedAt: Date | undefined;
    const outcome = expectOk(
      await scim.findUserByUserName("ada@example.com", async () => {
        // Another call of the family met a 429 while this one was being debited.
        pausedAt = new Date(clock.now().getTime() + 1_500);
        http.pause("scim", pausedAt);
      }),
    );
    expect(outcome.attempts).toBe(1);
    expect(slept).toContain(1_500);
    expect(clock.now().getTime()).toBeGreaterThanOrEqual(pausedAt!.getTime());
  });

  it("waits out a short pause and retries (a 429 was not applied, so even a POST may go again)", async () => {
    await addFault(emulator.url, { method: "POST", path: "/scim/v2/Users", status: 429, count: 1 });
    const { calls, beforeSend } = counter();
    const outcome = expectOk(await client().createUser(ada, beforeSend));
    expect(outcome.attempts).toBe(2);
    expect(calls).toEqual([1, 2]);
    // No Retry-After header: the one-second fallback pause (less the time the 429 took to read).
    expect(
      slept.some((ms) => ms > 800 && ms <= 1_000),
      String(slept),
    ).toBe(true);
    expect(emulator.state.dashboardUsers.byId.size).toBe(1);
  });
});

describe("logging", () => {
  it("logs each attempt with method, route template, status and duration; never the email or a token", async () => {
    const { setLogLevel, setLogTransport, resetLogger } = await import("../../src/logging/logger.js");
    const { default: winston } = await import("winston");
    const lines: Record<string, unknown>[] = [];
    // An object-mode stream receives the structured entries themselves.
    const sink = new Writable({
      objectMode: true,
      write(info: Record<string, unknown>, _encoding, done) {
        lines.push(info);
        done();
      },
    });
    setLogTransport(new winston.transports.Stream({ stream: sink }));
    setLogLevel("info");
    let id = "";
    try {
      const scim = client();
      id = scim.readResource(expectOk(await scim.createUser(ada)).body)!.id;
      await scim.findUserByUserName(ada.userName);
      await scim.deleteUser(id);
      await scim.deleteUser(id);
    } finally {
      resetLogger();
    }
    const calls = lines.filter((l) => l.category === "platform");
    expect(calls.map((l) => [l.method, l.route, l.status, l.outcome])).toEqual([
      ["POST", "/scim/v2/Users", 201, "ok"],
      ["GET", "/scim/v2/Users", 200, "ok"],
      ["DELETE", "/scim/v2/Users/:id", 204, "ok"],
      ["DELETE", "/scim/v2/Users/:id", 404, "http_error"],
    ]);
    for (const line of calls) expect(typeof line.durationMs).toBe("number");
    const text = JSON.stringify(lines);
    expect(text).not.toContain("ada@");
    expect(text).not.toContain("dev-scim-token");
    expect(text).not.toContain(id);
  });
});

import { appendFileSync } from "node:fs";
import { runInNewContext } from "node:vm";
import v8 from "node:v8";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDP_TOKEN, idp, startStack, type Stack } from "../support/stack.js";
import { rawClient, runPool, type RawResponse } from "../support/fuzz.js";
import { entraUser, fuzzCase, groupBody, oktaUser, type FuzzIds } from "../support/scimRequests.js";
import { ERROR_SCHEMA } from "../support/constants.js";

/**
 * Fuzzes the IdP-facing SCIM server of a started service over real HTTP (keep-alive, 16 in
 * flight): mutated Okta and Entra payloads, PATCH operations, filters, paths, huge and deeply
 * nested bodies, odd content types and invalid UTF-8; one body in eight arrives after its head, in
 * pieces. Whatever arrives: every request answered, never a 5xx, every error
 * is an RFC 7644 error body, the process stays up and memory stays bounded.
 *
 * Replay a failure with FUZZ_SEED=<seed printed below>; FUZZ_REQUESTS changes the count;
 * FUZZ_TRACE=<file> appends "start i"/"end i" lines (a request with no end is what hung).
 */

const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const CONCURRENCY = 16;
const MAX_BODY_BYTES = 65_536;
const SCIM_TYPES = new Set([
  "invalidSyntax",
  "invalidFilter",
  "invalidPath",
  "invalidValue",
  "noTarget",
  "uniqueness",
  "mutability",
  "tooMany",
  "invalidVers",
  "sensitive",
]);

/** The GC, exposed at runtime when the process was not started with --expose-gc. */
function gc(): void {
  const global = globalThis as { gc?: () => void };
  if (!global.gc) {
    v8.setFlagsFromString("--expose-gc");
    global.gc = runInNewContext("gc") as () => void;
  }
  global.gc!();
  global.gc!();
}

function memory() {
  gc();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/** What is wrong with an error response's shape, or undefined when it is an RFC 7644 error. */
function errorShapeProblem(res: RawResponse): string | undefined {
  if (!/^application\/scim\+json/.test(String(res.headers["content-type"])))
    return `content-type ${res.headers["content-type"]}`;
  let body: { schemas?: unknown; status?: unknown; scimType?: unknown; detail?: unknown };
  try {
    body = JSON.parse(res.body.toString("utf8"));
  } catch {
    return "body is not JSON";
  }
  if (!Array.isArray(body.schemas) || !body.schemas.includes(ERROR_SCHEMA)) return "schemas lacks the Error schema";
  if (body.status !== String(res.status)) return `status field ${JSON.stringify(body.status)} for HTTP ${res.status}`;
  if (typeof body.detail !== "string" || !body.detail) return "no detail";
  if (body.scimType !== undefined && !SCIM_TYPES.has(String(body.scimType)))
    return `unknown scimType ${JSON.stringify(body.scimType)}`;
  return undefined;
}

describe(`SCIM fuzz (seed ${SEED})`, () => {
  let stack: Stack;
  const ids: FuzzIds = { users: [], groups: [] };

  beforeAll(async () => {
    stack = await startStack({ workers: false, env: { SCIM_MAX_BODY_BYTES: String(MAX_BODY_BYTES) } });
    const scim = idp(stack);
    for (let n = 0; n < 6; n++) {
      const body = n % 2 ? entraUser(`seed-${n}@example.com`) : oktaUser(`seed-${n}@example.com`);
      const res = await scim.send("post", "/Users", body);
      expect(res.status, res.text).toBe(201);
      ids.users.push(res.body.id as string);
    }
    for (let n = 0; n < 3; n++) {
      const res = await scim.send("post", "/Groups", groupBody(`Seed group ${n}`, ids.users.slice(n, n + 3)));
      expect(res.status, res.text).toBe(201);
      ids.groups.push(res.body.id as string);
    }
  });
  afterAll(async () => stack?.close());

  it(
    `answers ${REQUESTS} generated requests with no 5xx, RFC 7644 errors, the process up and memory bounded`,
    { timeout: 300_000 },
    async () => {
      console.log(`SCIM fuzz seed ${SEED} (replay: FUZZ_SEED=${SEED}), ${REQUESTS} requests, ${CONCURRENCY} in flight`);
      const client = rawClient(stack.service.url, CONCURRENCY);
      const statuses = new Map<number, number>();
      const kinds = new Map<string, number>();
      const failures: string[] = [];
      let sent = 0;
      let inPieces = 0;
      const runRange = (from: number, to: number) =>
        runPool(to - from, CONCURRENCY, async (k) => {
          const i = from + k;
          const { kind, request } = fuzzCase(SEED, i, ids, MAX_BODY_BYTES);
          // One request in 50 carries a wrong or no token: whatever its body, the answer is 401.
          const unauthenticated = i % 50 === 49;
          const authorization: Record<string, string> = unauthenticated
            ? i % 100 === 99
              ? {}
              : { Authorization: `Bearer ${IDP_TOKEN.slice(0, -1)}?` }
            : { Authorization: `Bearer ${IDP_TOKEN}` };
          request.headers = { ...request.headers, ...authorization };
          // One body in eight arrives after its head, in pieces: the body parser runs from later socket reads.
          if (request.body !== undefined && Buffer.byteLength(request.body) < MAX_BODY_BYTES && i % 8 === 3) {
            request.pieces = { count: 1 + (i % 4), lateMs: 5 + (i % 30) };
            inPieces++;
          }
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
          const label = () =>
            `#${i} ${kind} ${request.method} ${request.path.slice(0, 160)} ${String(request.body ?? "").slice(0, 200)}`;
          let res: RawResponse;
          if (process.env.FUZZ_TRACE) appendFileSync(process.env.FUZZ_TRACE, `start ${i} ${kind}\n`);
          try {
            res = await client.send(request);
            sent++;
          } catch (error) {
            failures.push(`${label()} → transport error ${(error as Error).message}`);
            return;
          }
          if (process.env.FUZZ_TRACE) appendFileSync(process.env.FUZZ_TRACE, `end ${i} ${res.status}\n`);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status >= 500) failures.push(`${label()} → ${res.status} ${res.body.toString("utf8").slice(0, 300)}`);
          // 431 comes from Node's HTTP parser (request line over 16 KB) before any middleware runs.
          else if (
            res.status >= 400 &&
            request.method !== "HEAD" &&
            !(res.status === 431 && request.path.length > 16_000)
          ) {
            const problem = errorShapeProblem(res);
            if (problem)
              failures.push(
                `${label()} → ${res.status} not an RFC 7644 error (${problem}): ${res.body.toString("utf8").slice(0, 200)}`,
              );
          }
          // (431 is Node's parser refusing an over-long request line, before authentication can run.)
          // 429: past AUTH_THROTTLE_PER_ADDRESS wrong tokens from this one address (src/auth/authThrottle.ts).
          if (unauthenticated && res.status !== 401 && res.status !== 429 && res.status !== 431)
            failures.push(`${label()} without a valid token → ${res.status}, expected 401 (or 429)`);
          else if (!unauthenticated && kind === "huge" && res.status !== 413)
            failures.push(`${label()} → ${res.status}, expected 413`);
        });

      // Warm up (JIT, pools, caches) before taking the baseline.
      const warmUp = Math.min(1000, Math.floor(REQUESTS / 10));
      await runRange(0, warmUp);
      const before = memory();
      const started = Date.now();
      await runRange(warmUp, REQUESTS);
      const seconds = (Date.now() - started) / 1000;
      const after = memory();
      client.close();

      const health = await fetch(`${stack.service.url}/healthz`);
      const ready = await fetch(`${stack.service.url}/readyz`);
      const list = await idp(stack).send("get", "/Users?count=1");
      console.log(
        `SCIM fuzz seed ${SEED}: ${sent} requests answered (${(sent / seconds).toFixed(0)}/s after warm-up), ${inPieces} bodies late and in pieces, ` +
          `statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}, kinds ${JSON.stringify(Object.fromEntries(kinds))}, ` +
          `5xx/failures ${failures.length}; RSS ${mb(before.rss)} → ${mb(after.rss)}, heap ${mb(before.heapUsed)} → ${mb(after.heapUsed)}`,
      );

      expect(failures.slice(0, 20)).toEqual([]);
      expect(sent).toBe(REQUESTS);
      expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
      expect(health.status).toBe(200);
      expect(ready.status).toBe(200);
      expect(list.status).toBe(200);
      // Bounded: what the run retained after a full GC is small next to what it pushed through
      // (thousands of bodies up to the size limit); RSS may grow with allocator pools but not unboundedly.
      expect(after.heapUsed - before.heapUsed).toBeLessThan(64 * 2 ** 20);
      expect(after.rss).toBeLessThan(before.rss * 1.5 + 100 * 2 ** 20);
    },
  );
});

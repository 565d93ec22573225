import http from "node:http";
import { setTimeout as delay } from "node:timers/promises";

/**
 * Building blocks for fuzzing an HTTP service: a seeded PRNG (so a failing run can be replayed
 * with FUZZ_SEED), JSON mutators, and a raw keep-alive HTTP client that can send any bytes with
 * any (or no) content type.
 */

/** mulberry32: small, fast, and good enough to drive a fuzzer reproducibly. */
export function prng(seed: number) {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number): boolean => next() < p;
  return { next, int, pick, chance };
}
export type Rng = ReturnType<typeof prng>;

/** Strings that tend to break parsers, encoders, SQL and indexes. */
const NASTY_STRINGS: readonly string[] = [
  "",
  " ",
  "True",
  "False",
  "null",
  "undefined",
  "0",
  "-1",
  "1e309",
  "NaN",
  "a@b.c",
  "ANN@EXAMPLE.COM",
  "\u0000",
  "nul\u0000inside",
  "\ud800",
  "\udfff lone",
  "😀👩‍👩‍👧‍👦",
  "\u202eevil\u202c",
  "\u200b\u200d\ufeff",
  "ｆｕｌｌｗｉｄｔｈ",
  "Ünïcödé Ŝţŕîñğ",
  "日本語のテキスト",
  "'",
  '"',
  "\\",
  "' OR 1=1 --",
  '"; DROP TABLE idp_users; --',
  "%",
  "_",
  "$1",
  "/*",
  "*/",
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "${jndi:ldap://x}",
  "{{7*7}}",
  "__proto__",
  "constructor",
  "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department",
  'emails[type eq "work"].value',
  'members[value eq "x"]',
  "6f1f0d7e-0000-4000-8000-000000000000",
  "00000000-0000-0000-0000-000000000000",
  "2020-01-01T00:00:00Z",
  "9999-99-99T99:99:99Z",
  "Replace",
  "remove",
  "add",
  "\r\n\t",
];

export function nastyString(rng: Rng): string {
  const r = rng.next();
  if (r < 0.7) return rng.pick(NASTY_STRINGS);
  if (r < 0.8) return "x".repeat(1 + rng.int(300));
  if (r < 0.85) return rng.pick(["a", "é", "😀", "\u0000", "'"]).repeat(1000 + rng.int(20_000));
  // Random code points, surrogates included.
  return Array.from({ length: 1 + rng.int(40) }, () => String.fromCharCode(rng.int(0x10000))).join("");
}

function randomScalar(rng: Rng): unknown {
  return rng.pick<() => unknown>([
    () => null,
    () => true,
    () => false,
    () => 0,
    () => -1,
    () => 1.5,
    () => 1e308,
    () => Number.MAX_SAFE_INTEGER + 2,
    () => rng.int(1000),
    () => nastyString(rng),
    () => nastyString(rng),
  ])();
}

export function randomValue(rng: Rng, keys: readonly string[], depth = 0): unknown {
  const r = rng.next();
  if (depth > 4 || r < 0.45) return randomScalar(rng);
  if (r < 0.7) return Array.from({ length: rng.int(4) }, () => randomValue(rng, keys, depth + 1));
  return Object.fromEntries(
    Array.from({ length: rng.int(5) }, () => [
      rng.chance(0.8) ? rng.pick(keys) : nastyString(rng),
      randomValue(rng, keys, depth + 1),
    ]),
  );
}

function nested(depth: number, leaf: unknown = 1, asArray = false): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = asArray ? [value] : { a: value };
  return value;
}

type Container = Record<string, unknown> | unknown[];

/** Every object/array inside `value` (the value itself included), for picking a mutation site. */
export function containers(value: unknown, out: Container[] = []): Container[] {
  if (value && typeof value === "object") {
    out.push(value as Container);
    for (const inner of Object.values(value)) containers(inner, out);
  }
  return out;
}

/**
 * Applies 1–3 structural mutations to a deep copy of `value`: drop a key, change a value's type,
 * put an array where an object was (or the reverse), null, unicode, huge strings, deeper nesting,
 * renamed keys (case, urn: and dotted forms).
 */
export function mutateJson(rng: Rng, value: unknown, keys: readonly string[]): unknown {
  const copy = structuredClone(value);
  const mutations = 1 + rng.int(3);
  for (let m = 0; m < mutations; m++) {
    const sites = containers(copy);
    if (!sites.length) return randomValue(rng, keys);
    const site = rng.pick(sites);
    const siteKeys = Object.keys(site);
    // Arrays only get index keys: a "constructor" key on an array would break Array methods here.
    const key = siteKeys.length ? rng.pick(siteKeys) : Array.isArray(site) ? "0" : rng.pick(keys);
    const own = site as Record<string, unknown>;
    const old = Object.hasOwn(site, key) ? own[key] : undefined;
    // defineProperty, so "__proto__" and "constructor" become plain keys, as in parsed JSON.
    const target = new Proxy(own, {
      set: (t, k, v) =>
        Reflect.defineProperty(t, k, { value: v, writable: true, enumerable: true, configurable: true }),
    });
    switch (rng.int(11)) {
      case 0:
        if (Array.isArray(site)) site.splice(Number(key), 1);
        else delete target[key];
        break;
      case 1:
        target[key] = null;
        break;
      case 2:
        target[key] = randomScalar(rng);
        break;
      case 3:
        target[key] = old && typeof old === "object" && !Array.isArray(old) ? [old, old] : { value: old };
        break;
      case 4:
        target[key] = randomValue(rng, keys);
        break;
      case 5:
        target[key] = nested(5 + rng.int(40), old ?? "x", rng.chance(0.5));
        break;
      case 6:
        target[key] = typeof old === "string" ? old + nastyString(rng) : String(old);
        break;
      case 7:
        target[key] = "A".repeat(10_000 + rng.int(200_000));
        break;
      case 8: {
        if (Array.isArray(site)) site.push(structuredClone(old));
        else {
          // A renamed copy of the key: other case, urn-prefixed or dotted.
          const renamed: string = rng.pick([
            key.toUpperCase(),
            key.toLowerCase(),
            `urn:ietf:params:scim:schemas:core:2.0:User:${key}`,
            `name.${key}`,
            `${key}.value`,
            ` ${key}`,
          ]);
          target[renamed] = old;
        }
        break;
      }
      case 9:
        target[Array.isArray(site) ? String(site.length) : rng.pick(keys)] = randomValue(rng, keys);
        break;
      default:
        if (typeof old === "boolean") target[key] = rng.pick([String(old), old ? "True" : "False", old ? 1 : 0]);
        else if (typeof old === "number") target[key] = String(old);
        else if (typeof old === "string")
          target[key] = rng.pick([Number(old) || 0, [old], { value: old }, old === "" ? null : true]);
        else target[key] = rng.pick([[], {}, ""]);
    }
  }
  return copy;
}

/** JSON text with one key duplicated (JSON.stringify cannot produce that). */
export function withDuplicateKey(rng: Rng, value: Record<string, unknown>): string {
  const entries = Object.entries(value);
  if (!entries.length) return "{}";
  const [key] = rng.pick(entries);
  const parts = entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
  parts.push(`${JSON.stringify(key)}:${JSON.stringify(randomScalar(rng))}`);
  return `{${parts.join(",")}}`;
}

/** Byte-level damage to a JSON text: truncation, a flipped byte, invalid UTF-8, a stray NUL. */
export function corruptBytes(rng: Rng, text: string): Buffer {
  const bytes = Buffer.from(text, "utf8");
  const at = bytes.length ? rng.int(bytes.length) : 0;
  switch (rng.int(5)) {
    case 0:
      return bytes.subarray(0, at);
    case 1: {
      const copy = Buffer.from(bytes);
      if (copy.length) copy[at] = rng.int(256);
      return copy;
    }
    case 2:
      return Buffer.concat([
        bytes.subarray(0, at),
        Buffer.from(
          rng.pick([[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xf0, 0x28, 0x8c, 0xbc], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]),
        ),
        bytes.subarray(at),
      ]);
    case 3:
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([0]), bytes.subarray(at)]);
    default:
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
  }
}

export type RawRequest = {
  method: string;
  /** The request target exactly as sent (not re-encoded). */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Send the body chunked (no Content-Length). */
  chunked?: boolean;
  /**
   * Send the body in `count` pieces, the first `lateMs` after the head and each next one `lateMs`
   * after the one before: the server has started on the request before its body arrives, so the
   * parser's events come from later socket reads.
   */
  pieces?: { count: number; lateMs: number };
};
/**
 * A request that got no answer. `whileSending`: its body was not all sent yet, which is where a
 * server that answered early and closed (a reset racing its answer) and one that dropped the
 * connection look alike.
 */
/** What in an answer's body betrays a stack trace or an internal error (the fuzz suites refuse it). */
export const STACK_LINE = /\n\s+at .+:\d+:\d+|node_modules\/|\bTypeError\b|\bReferenceError\b/;

export type TransportError = Error & { whileSending?: boolean };
export type RawResponse = { status: number; headers: http.IncomingHttpHeaders; body: Buffer };

/** A keep-alive HTTP client that sends exactly what it is given. */
export function rawClient(baseUrl: string, maxSockets = 16) {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const send = (req: RawRequest): Promise<RawResponse> =>
    new Promise((resolve, reject) => {
      const body =
        req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, "utf8");
      const headers: Record<string, string | number> = { ...req.headers };
      if (body && !req.chunked) headers["Content-Length"] = body.length;
      if (body && req.chunked) headers["Transfer-Encoding"] = "chunked";
      const outgoing = http.request(
        { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent, timeout: 30_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on("error", reject);
        },
      );
      outgoing.on("timeout", () => outgoing.destroy(new Error(`timeout: ${req.method} ${req.path.slice(0, 200)}`)));
      outgoing.on("error", (error: TransportError) => {
        error.whileSending = !outgoing.writableFinished;
        reject(error);
      });
      if (body && req.pieces) {
        outgoing.flushHeaders();
        void sendInPieces(outgoing, body, req.pieces);
        return;
      }
      if (body && req.chunked) {
        // A few chunks, so the server sees a streamed body.
        const step = Math.max(1, Math.ceil(body.length / 4));
        for (let i = 0; i < body.length; i += step) outgoing.write(body.subarray(i, i + step));
      } else if (body) outgoing.write(body);
      outgoing.end();
    });
  return { send, close: () => agent.destroy() };
}

async function sendInPieces(
  outgoing: http.ClientRequest,
  body: Buffer,
  { count, lateMs }: { count: number; lateMs: number },
): Promise<void> {
  const step = Math.max(1, Math.ceil(body.length / count));
  for (let i = 0; i < body.length; i += step) {
    await delay(lateMs);
    // The server may have answered and closed already: what it did not read is not sent.
    if (outgoing.destroyed) return;
    outgoing.write(body.subarray(i, i + step));
  }
  if (!outgoing.destroyed) outgoing.end();
}

/** Runs `count` tasks with at most `concurrency` in flight. */
export async function runPool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

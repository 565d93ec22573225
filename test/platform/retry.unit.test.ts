import { describe, expect, it } from "vitest";
import { encodeQuery, parseBody } from "../../src/platform/transport.js";
import {
  backoffDelayMs,
  classifyNetworkError,
  defaultRetryPolicy,
  parseRateLimitReset,
  parseRetryAfter,
  rateLimitedUntil,
  type RetryPolicy,
} from "../../src/platform/retry.js";

const NOW = new Date("2026-03-01T12:00:00.000Z");
const at = (iso: string) => new Date(iso);

describe("backoffDelayMs: full jitter under an exponential ceiling", () => {
  const policy: RetryPolicy = { ...defaultRetryPolicy, baseDelayMs: 100, maxDelayMs: 1_000 };
  it.each([
    [1, 1, 99],
    [2, 1, 199],
    [3, 1, 399],
    [4, 1, 799],
    [5, 1, 999],
    [40, 1, 999],
    [3, 0, 0],
    [3, 0.5, 200],
  ])("after attempt %i with random %f → %i ms", (attempt, random, expected) => {
    expect(backoffDelayMs(policy, attempt, () => (random === 1 ? 0.9999 : random))).toBe(expected);
  });
});

describe("parseRetryAfter", () => {
  it.each([
    ["seconds", "30", at("2026-03-01T12:00:30.000Z")],
    ["zero seconds", "0", NOW],
    ["fractional seconds round up", "1.2", at("2026-03-01T12:00:01.200Z")],
    ["HTTP date", "Sun, 01 Mar 2026 12:05:00 GMT", at("2026-03-01T12:05:00.000Z")],
    ["HTTP date in the past means now", "Sun, 01 Mar 2026 11:00:00 GMT", NOW],
    ["spaces around", "  5 ", at("2026-03-01T12:00:05.000Z")],
    ["garbage", "soon", undefined],
    ["negative", "-5", undefined],
    ["empty", "", undefined],
    ["absent", null, undefined],
  ] as const)("%s", (_name, value, expected) => {
    expect(parseRetryAfter(value, NOW)).toEqual(expected);
  });
});

describe("parseRateLimitReset", () => {
  it.each([
    ["epoch seconds", String(Date.parse("2026-03-02T00:00:00Z") / 1000), at("2026-03-02T00:00:00.000Z")],
    ["epoch in the past means now", String(Date.parse("2026-03-01T00:00:00Z") / 1000), NOW],
    ["small numbers are a delay in seconds", "60", at("2026-03-01T12:01:00.000Z")],
    ["garbage", "tomorrow", undefined],
    ["absent", undefined, undefined],
  ] as const)("%s", (_name, value, expected) => {
    expect(parseRateLimitReset(value, NOW)).toEqual(expected);
  });
});

describe("rateLimitedUntil: Retry-After first, then X-RateLimit-Reset, then a short fallback", () => {
  const headers = (h: Record<string, string>) => new Headers(h);
  it.each([
    ["Retry-After wins", { "retry-after": "10", "x-ratelimit-reset": "60" }, at("2026-03-01T12:00:10.000Z")],
    ["Reset when Retry-After is missing", { "x-ratelimit-reset": "60" }, at("2026-03-01T12:01:00.000Z")],
    [
      "Reset when Retry-After is unreadable",
      { "retry-after": "later", "x-ratelimit-reset": "60" },
      at("2026-03-01T12:01:00.000Z"),
    ],
    ["fallback when neither", {}, at("2026-03-01T12:00:01.000Z")],
  ] as const)("%s", (_name, h, expected) => {
    expect(rateLimitedUntil(headers(h), NOW)).toEqual(expected);
  });
});

describe("classifyNetworkError: could the request have been applied?", () => {
  const fetchError = (code: string) =>
    Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error(code), { code }) });
  it.each([
    ["refused: not sent", fetchError("ECONNREFUSED"), false, { sent: false, reason: "ECONNREFUSED" }],
    ["DNS failure: not sent", fetchError("ENOTFOUND"), false, { sent: false, reason: "ENOTFOUND" }],
    [
      "connect timeout: not sent",
      fetchError("UND_ERR_CONNECT_TIMEOUT"),
      false,
      { sent: false, reason: "UND_ERR_CONNECT_TIMEOUT" },
    ],
    ["socket closed: maybe applied", fetchError("UND_ERR_SOCKET"), false, { sent: true, reason: "UND_ERR_SOCKET" }],
    ["reset: maybe applied", fetchError("ECONNRESET"), false, { sent: true, reason: "ECONNRESET" }],
    ["our timeout: maybe applied", new DOMException("aborted", "AbortError"), true, { sent: true, reason: "timeout" }],
    ["unknown: maybe applied", new Error("weird"), false, { sent: true, reason: "connection_lost" }],
  ] as const)("%s", (_name, error, timedOut, expected) => {
    expect(classifyNetworkError(error, timedOut)).toEqual(expected);
  });
});

describe("encodeQuery and parseBody", () => {
  it("encodes spaces and quotes as percent escapes and repeats array names", () => {
    expect(encodeQuery({ filter: 'userName eq "a+b@x.com"', "external_id[]": ["1", "2"], skip: undefined })).toBe(
      "?filter=userName%20eq%20%22a%2Bb%40x.com%22&external_id%5B%5D=1&external_id%5B%5D=2",
    );
    expect(encodeQuery({})).toBe("");
  });

  it.each([
    ["", undefined],
    ['{"detail":"User not found"}', { detail: "User not found" }],
    ["[1]", [1]],
    ["<html>oops</html>", "<html>oops</html>"],
    ["{broken", "{broken"],
  ] as const)("parseBody(%j)", (text, expected) => {
    expect(parseBody(text)).toEqual(expected);
  });
});

import { describe, expect, it } from "vitest";
import { canonicalRow } from "../../src/db/auditChain.js";

describe("canonicalRow", () => {
  it("writes RFC 8785 JSON without id and chain_hash, null columns left out, dates in ISO 8601", () => {
    expect(
      canonicalRow({
        id: "7",
        chain_hash: "ab",
        user_name: "a@example.com",
        at: new Date("2026-11-27T01:02:03.456Z"),
        error: null,
        calls_spent: 1,
      }),
    ).toBe('{"at":"2026-11-27T01:02:03.456Z","calls_spent":1,"user_name":"a@example.com"}');
  });

  it("writes PostgreSQL's infinite timestamps (±Infinity from pg) instead of failing the entry", () => {
    // A full resync queues its checks at enqueued_at -infinity; a revocation merged into one was
    // once logged with that time, and the chain threw "Infinity is not allowed" after the DELETE.
    expect(canonicalRow({ queued_at: -Infinity, at: Infinity })).toBe('{"at":"Infinity","queued_at":"-Infinity"}');
  });
});

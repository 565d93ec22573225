import { describe, expect, it } from "vitest";
import { canonicalRow } from "../../src/db/auditChain.js";
import { independentCanonical, independentLink } from "./independentChain.js";

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

  it("writes nested JSON columns in full, keys sorted at every depth: a known answer", () => {
    const row = {
      id: "9",
      chain_hash: "x",
      user_name: "a@example.com",
      at: new Date("2026-11-27T01:02:03.456Z"),
      error: null,
      calls_spent: 2,
      trigger: { kind: "idp" },
      after: { userName: "a@example.com", roles: ["b", "a"], groups: { é: "ü", z: 1, a: { y: null, b: true } } },
    };
    // Written by hand from RFC 8785, and hashed with `printf '%s\n%s' "$previous" "$canonical" | sha256sum`.
    const canonical =
      '{"after":{"groups":{"a":{"b":true,"y":null},"z":1,"é":"ü"},"roles":["b","a"],"userName":"a@example.com"},' +
      '"at":"2026-11-27T01:02:03.456Z","calls_spent":2,"trigger":{"kind":"idp"},"user_name":"a@example.com"}';
    expect(canonicalRow(row)).toBe(canonical);
    expect(independentCanonical(row)).toBe(canonical);
    expect(independentLink("ab".repeat(32), canonical)).toBe(
      "06c3fae555a3c882c1f50fb4c82726c7679e39292629bc4a9f33c2fac1bff70f",
    );
  });
});

import { createHash } from "node:crypto";

/**
 * The audit chain recomputed apart from the product (src/db/auditChain.ts), from the rules in
 * docs/access-review.md: an entry's canonical bytes are its columns as read back from PostgreSQL,
 * without `id` and `chain_hash`, null columns left out, dates in ISO 8601, written as RFC 8785 JSON
 * (keys sorted by UTF-16 code units at every depth, no whitespace); its hash is
 * SHA-256(previous hash, "\n", those bytes) in hex. Written here so that a break in the product's
 * canonical form cannot also break the check.
 */

function jcs(value: unknown): string {
  if (value === null) return "null";
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return JSON.stringify(String(value));
    return JSON.stringify(value);
  }
  if (typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${jcs(v)}`).join(",")}}`;
  }
  throw new Error(`no JSON form for ${typeof value}`);
}

/** An entry's canonical bytes, as the chain defines them. */
export function independentCanonical(row: Record<string, unknown>): string {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key === "id" || key === "chain_hash" || value === null || value === undefined) continue;
    kept[key] = value;
  }
  return jcs(kept);
}

export function independentLink(previousHash: string, canonical: string): string {
  return createHash("sha256").update(`${previousHash}\n${canonical}`, "utf8").digest("hex");
}

/** Each row's expected hash, following `anchorHash`, in the order given (id order). */
export function independentChain(anchorHash: string, rows: Record<string, unknown>[]): string[] {
  let previous = anchorHash;
  return rows.map((row) => (previous = independentLink(previous, independentCanonical(row))));
}

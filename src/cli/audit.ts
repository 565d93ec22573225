import { parseArgs } from "node:util";
import type { Database } from "../db/database.js";
import { CHAINED_TABLES, verifyChain } from "../db/auditChain.js";

/**
 * `scim-connector audit verify [--head HASH]...`: re-computes every hash chain (docs/access-review.md,
 * "The tamper-evident log": the log's and the campaign decisions') and names the first entry of
 * each that does not match, or a chained entry left at or below the anchor; exit code 1 then. Each
 * `--head` (an evidence pack's signed `chain.headHash` or `decisionsChain.headHash`) must be on a
 * chain that verifies, else exit 1: a chain rewritten from its anchor on verifies by itself, but
 * no longer holds the head a pack signed.
 */
export async function auditCommand(db: Database, args: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { head: { type: "string", multiple: true } },
  });
  if (positionals.length !== 1 || positionals[0] !== "verify")
    throw new Error("audit takes one subcommand: verify [--head HASH]...");
  const heads = new Set((values.head ?? []).map((h) => h.trim().toLowerCase()));
  for (const h of heads)
    if (!/^[0-9a-f]{64}$/.test(h)) throw new Error(`--head ${h}: a chain hash is 64 hexadecimal digits`);
  const found = new Map<string, string>();
  for (const chained of CHAINED_TABLES) {
    const verdict = await verifyChain(db, chained, heads);
    if (verdict.ok) {
      console.log(
        `${verdict.chain}: ${verdict.entries} entries verified; head entry ${verdict.headId}, hash ${verdict.headHash}` +
          (verdict.beforeChain ? ` (${verdict.beforeChain} older entries predate the chain)` : ""),
      );
      for (const f of verdict.found) found.set(f.hash, `entry ${f.entryId} of ${verdict.chain}`);
    } else {
      process.stderr.write(
        `${verdict.chain}: NOT VERIFIED after ${verdict.entries} good entries: ${verdict.problem}\n`,
      );
      process.exitCode = 1;
    }
  }
  for (const h of heads) {
    const where = found.get(h);
    if (where) console.log(`head ${h}: on the chain, ${where}`);
    else {
      process.stderr.write(
        `head ${h}: NOT on any verified chain: the chain was rewritten or cut after the pack that signed it, or retention deleted that entry since\n`,
      );
      process.exitCode = 1;
    }
  }
}

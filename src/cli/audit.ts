import type { Database } from "../db/database.js";
import { CHAINED_TABLES, verifyChain } from "../db/auditChain.js";

/**
 * `scim-connector audit verify`: re-computes every hash chain (docs/access-review.md, "The
 * tamper-evident log": the log's and the campaign decisions') and names the first entry of each
 * that does not match; exit code 1 then.
 */
export async function auditCommand(db: Database, args: string[]): Promise<void> {
  const [sub] = args;
  if (sub !== "verify") throw new Error("audit takes one subcommand: verify");
  for (const chained of CHAINED_TABLES) {
    const verdict = await verifyChain(db, chained);
    if (verdict.ok) {
      console.log(
        `${verdict.chain}: ${verdict.entries} entries verified; head entry ${verdict.headId}, hash ${verdict.headHash}` +
          (verdict.beforeChain ? ` (${verdict.beforeChain} older entries predate the chain)` : ""),
      );
    } else {
      process.stderr.write(
        `${verdict.chain}: NOT VERIFIED after ${verdict.entries} good entries: ${verdict.problem}\n`,
      );
      process.exitCode = 1;
    }
  }
}

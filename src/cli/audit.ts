import type { Database } from "../db/database.js";
import { RECONCILE_LOG_CHAIN, verifyChain } from "../db/auditChain.js";

/**
 * `scim-connector audit verify`: re-computes every hash chain (docs/access-review.md, "The
 * tamper-evident log") and names the first entry that does not match; exit code 1 then.
 */
export async function auditCommand(db: Database, args: string[]): Promise<void> {
  const [sub] = args;
  if (sub !== "verify") throw new Error("audit takes one subcommand: verify");
  for (const chained of [RECONCILE_LOG_CHAIN]) {
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

import type { Database } from "../../db/database.js";
import { CAMPAIGN_DECISIONS_CHAIN, RECONCILE_LOG_CHAIN, verifyChain, type ChainVerdict } from "../../db/auditChain.js";
import { AppError } from "../../errors.js";

/**
 * The hash chains an evidence pack vouches for (docs/access-review.md, "Evidence"): verified before
 * anything is written, recorded in the manifest, and read back by `evidence verify`. A pack over a
 * chain that does not verify cannot vouch for what it lists, so every surface says so before the
 * download starts and writes one only when the caller asks for it anyway; verify then fails on it.
 */

export type ChainSummary = {
  name: string;
  verified: boolean;
  entries: number;
  headId: string | null;
  headHash: string | null;
  problem?: string;
};

/** The manifest's fields for the chains, with what each is called in words. */
export type EvidenceChains = { chain: ChainSummary; decisionsChain: ChainSummary };
const CHAIN_WORDS: Record<keyof EvidenceChains, string> = {
  chain: "the reconciliation log's chain",
  decisionsChain: "the campaign decisions' chain",
};

const chainSummary = (v: ChainVerdict): ChainSummary =>
  v.ok
    ? { name: v.chain, verified: true, entries: v.entries, headId: v.headId, headHash: v.headHash }
    : { name: v.chain, verified: false, entries: v.entries, headId: null, headHash: null, problem: v.problem };

/** A pack was asked for over a chain that does not verify, and the caller did not accept that. */
export class UnverifiedChainError extends AppError {
  constructor(readonly notices: string[]) {
    super(
      `No evidence pack: ${notices.join("; ")}. A pack written now cannot vouch for it, and ` +
        "`scim-connector evidence verify` fails on it (`scim-connector audit verify` names the bad entries). " +
        "To download it anyway, pass acceptUnverifiedChain=true.",
      409,
    );
  }
}

/**
 * Verifies both chains for a pack. Each chain that fails is described in `notices` ("the
 * reconciliation log's chain does not verify (entry 12 does not match its hash)"); unless the
 * caller accepts that, UnverifiedChainError is thrown before anything is written.
 */
export async function checkEvidenceChains(
  db: Database,
  acceptUnverified: boolean,
): Promise<{ chains: EvidenceChains; notices: string[] }> {
  const chains = {
    chain: chainSummary(await verifyChain(db, RECONCILE_LOG_CHAIN)),
    decisionsChain: chainSummary(await verifyChain(db, CAMPAIGN_DECISIONS_CHAIN)),
  };
  const notices = (Object.keys(CHAIN_WORDS) as (keyof EvidenceChains)[])
    .filter((key) => !chains[key].verified)
    .map((key) => `${CHAIN_WORDS[key]} does not verify (${chains[key].problem})`);
  if (notices.length > 0 && !acceptUnverified) throw new UnverifiedChainError(notices);
  return { chains, notices };
}

/** What `evidence verify` reports about the chains a manifest records: each not verified, or not recorded. */
export function manifestChainProblems(manifest: Partial<EvidenceChains>, manifestName: string): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(CHAIN_WORDS) as (keyof EvidenceChains)[]) {
    const summary = manifest[key];
    if (typeof summary?.verified !== "boolean")
      problems.push(`${manifestName} records no verdict for ${CHAIN_WORDS[key]}`);
    else if (!summary.verified)
      problems.push(
        `${CHAIN_WORDS[key]} did not verify when the pack was written (${summary.problem ?? "no reason recorded"})`,
      );
  }
  return problems;
}

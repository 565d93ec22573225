import type { KeyObject } from "node:crypto";
import type { Writable } from "node:stream";
import type { Clock } from "../../clock.js";
import type { Database } from "../../db/database.js";
import { checkEvidenceChains, type EvidenceChains } from "./chains.js";
import { writeEvidencePack, type Manifest } from "./pack.js";
import type { EvidenceWindow } from "./output.js";

/**
 * The evidence packs (docs/access-review.md, "Evidence") as every surface asks them: the JSON API,
 * the Access review page's button and `scim-connector evidence` call this one object, built once
 * with the signing key and the mapping file (src/service/http.ts, src/cli/evidence.ts).
 */
export type Evidence = {
  /** Whether packs can be written: EVIDENCE_SIGNING_KEY is set. */
  readonly canSign: boolean;
  /** Verifies both chains; UnverifiedChainError (nothing written) unless `acceptUnverified`. */
  checkChains(acceptUnverified: boolean): Promise<{ chains: EvidenceChains; notices: string[] }>;
  /** Writes the signed pack for `window` to `out` with the chains' verdicts checked first; throws without a key. */
  writePack(window: EvidenceWindow, out: Writable, checked?: EvidenceChains): Promise<Manifest>;
};

export function createEvidence(deps: {
  db: Database;
  clock: Clock;
  mappingFile?: string;
  signingKey?: KeyObject;
}): Evidence {
  const { db, clock, mappingFile, signingKey } = deps;
  return {
    canSign: signingKey !== undefined,
    checkChains: (acceptUnverified) => checkEvidenceChains(db, acceptUnverified),
    writePack(window, out, checked) {
      if (!signingKey) throw new Error("Evidence packs need EVIDENCE_SIGNING_KEY");
      const now = () => clock.now();
      return writeEvidencePack({ db, signingKey, now, ...(mappingFile ? { mappingFile } : {}) }, window, out, checked);
    },
  };
}

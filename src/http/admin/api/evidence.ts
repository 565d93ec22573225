import type { KeyObject } from "node:crypto";
import { Router, type Request, type Response } from "express";
import type { Clock } from "../../../clock.js";
import type { Database } from "../../../db/database.js";
import { writeEvidencePack } from "../../../admin/evidence/pack.js";
import { parseEvidenceWindow } from "../../../admin/evidence/window.js";
import { checkEvidenceChains } from "../../../admin/evidence/chains.js";
import { AppError, BadRequestError } from "../../../errors.js";
import { log } from "../../../logging/logger.js";

/**
 * GET or POST /evidence?from=DATE&to=DATE[&acceptUnverifiedChain=true]: the signed evidence pack
 * (docs/access-review.md, "Evidence") as a tar download, streamed. Behind the admin token (the
 * admin role).
 */

export type EvidenceDeps = {
  db: Database;
  clock: Clock;
  mappingFile?: string;
  evidenceSigningKey?: KeyObject;
};

export function evidenceApiRouter(deps: EvidenceDeps): Router {
  const router = Router();
  const send = (req: Request, res: Response) => {
    const text = (name: string) => {
      const value = req.query[name] ?? (req.body as Record<string, unknown> | undefined)?.[name];
      return typeof value === "string" ? value : undefined;
    };
    return sendEvidencePack(deps, text("from"), text("to"), res, text("acceptUnverifiedChain") === "true");
  };
  router.get("/evidence", send);
  router.post("/evidence", send);
  return router;
}

/**
 * Streams the signed pack for the window as an attachment: the one way the API and the Access
 * review page's "Evidence pack" button answer. A missing key (409), a bad window (400) or a hash
 * chain that does not verify (UnverifiedChainError, 409, unless `acceptUnverifiedChain`) is thrown
 * before anything is sent; an accepted unverified chain is named in the file's name and the
 * Evidence-Chain header. A failure midway cuts the download (a tar without its end is no pack).
 */
export async function sendEvidencePack(
  deps: EvidenceDeps,
  from: string | undefined,
  to: string | undefined,
  res: Response,
  acceptUnverifiedChain: boolean,
): Promise<void> {
  const signingKey = deps.evidenceSigningKey;
  if (!signingKey)
    throw new AppError(
      "Evidence packs need EVIDENCE_SIGNING_KEY (an Ed25519 private key, PEM or a file path) in the service's environment",
      409,
    );
  let window;
  try {
    window = parseEvidenceWindow(from, to);
  } catch (error) {
    throw new BadRequestError((error as Error).message);
  }
  const checked = await checkEvidenceChains(deps.db, acceptUnverifiedChain);
  const unverified = checked.notices.length > 0;
  const name = `evidence-${window.from.toISOString().slice(0, 10)}-${window.to.toISOString().slice(0, 10)}${unverified ? "-chain-not-verified" : ""}.tar`;
  res.setHeader("Content-Disposition", `attachment; filename="${name}"`);
  if (unverified) res.setHeader("Evidence-Chain", checked.notices.join("; ").replace(/[^\x20-\x7e]/g, "?"));
  res.type("application/x-tar");
  try {
    await writeEvidencePack(
      {
        db: deps.db,
        signingKey,
        now: () => deps.clock.now(),
        ...(deps.mappingFile ? { mappingFile: deps.mappingFile } : {}),
      },
      window,
      res,
      checked.chains,
    );
  } catch (error) {
    if (!res.headersSent) throw error;
    log.error("admin", "evidence pack failed midway", { error });
    res.destroy();
  }
}

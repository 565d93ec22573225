import { Router, type Request, type Response } from "express";
import type { Evidence } from "../../../review/evidence/frontDoor.js";
import { parseEvidenceWindow } from "../../../review/evidence/window.js";
import { AppError, BadRequestError, TooManyRequestsError } from "../../../errors.js";
import { log } from "../../../logging/logger.js";
import { actorOf } from "./auth.js";

/**
 * GET or POST /evidence?from=DATE&to=DATE[&acceptUnverifiedChain=true]: the signed evidence pack
 * (docs/access-review.md, "Evidence") as a tar download, streamed. Behind the admin token (the
 * admin role) and nothing else: no cookie reaches this API, so a GET is no cross-site surface.
 */

export function evidenceApiRouter(evidence: Evidence): Router {
  const router = Router();
  const send = (req: Request, res: Response) => {
    const text = (name: string) => {
      const value = req.query[name] ?? (req.body as Record<string, unknown> | undefined)?.[name];
      return typeof value === "string" ? value : undefined;
    };
    return sendEvidencePack(evidence, text("from"), text("to"), res, {
      acceptUnverifiedChain: text("acceptUnverifiedChain") === "true",
      actor: actorOf(res),
    });
  };
  router.get("/evidence", send);
  router.post("/evidence", send);
  return router;
}

/**
 * Who is writing a pack now (this process), each with its hold: one pack per user at a time, as for
 * the report's exports. A hold is released once, by its own request only.
 */
const writingPacks = new Map<string, symbol>();
/** What a second pack is told to wait: a pack over a long window reads the whole log. */
const PACK_RETRY_AFTER_SECONDS = 30;

/**
 * Streams the signed pack for the window as an attachment: the one way the API and the Access
 * review page's "Evidence pack" button answer, one pack per `actor` at a time (a second answers 429
 * with Retry-After: each reads the log over its window and verifies every chain). A missing key
 * (409), a bad window (400) or a hash chain that does not verify (UnverifiedChainError, 409, unless
 * `acceptUnverifiedChain`) is thrown before anything is sent; an accepted unverified chain is named
 * in the file's name and the Evidence-Chain header. A failure midway cuts the download (a tar
 * without its end is no pack).
 */
export async function sendEvidencePack(
  evidence: Evidence,
  from: string | undefined,
  to: string | undefined,
  res: Response,
  options: { acceptUnverifiedChain: boolean; actor: string },
): Promise<void> {
  if (writingPacks.has(options.actor)) {
    res.setHeader("Retry-After", String(PACK_RETRY_AFTER_SECONDS));
    throw new TooManyRequestsError("An evidence pack is already being written for you; try again when it ends");
  }
  const hold = Symbol(options.actor);
  writingPacks.set(options.actor, hold);
  const release = () => {
    if (writingPacks.get(options.actor) === hold) writingPacks.delete(options.actor);
  };
  // Released as the response closes: the pack's temporary files are removed after its last byte,
  // and a client that got the whole pack may ask for the next one at once.
  res.once("close", release);
  try {
    await writePackResponse(evidence, from, to, res, options.acceptUnverifiedChain);
  } finally {
    release();
  }
}

async function writePackResponse(
  evidence: Evidence,
  from: string | undefined,
  to: string | undefined,
  res: Response,
  acceptUnverifiedChain: boolean,
): Promise<void> {
  if (!evidence.canSign)
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
  const checked = await evidence.checkChains(acceptUnverifiedChain);
  const unverified = checked.notices.length > 0;
  const name = `evidence-${window.from.toISOString().slice(0, 10)}-${window.to.toISOString().slice(0, 10)}${unverified ? "-chain-not-verified" : ""}.tar`;
  res.setHeader("Content-Disposition", `attachment; filename="${name}"`);
  if (unverified) res.setHeader("Evidence-Chain", checked.notices.join("; ").replace(/[^\x20-\x7e]/g, "?"));
  res.type("application/x-tar");
  try {
    await evidence.writePack(window, res, checked.chains);
  } catch (error) {
    if (!res.headersSent) throw error;
    log.error("admin", "evidence pack failed midway", { error });
    res.destroy();
  }
}

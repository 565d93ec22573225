import { Router, type Request, type Response } from "express";
import {
  campaignItemsQuerySchema,
  checkReviewerName,
  decideSchema,
  deciderOf,
  startCampaignSchema,
  type Reviewer,
} from "../../../review/campaigns/index.js";
import type { Campaigns } from "../../../review/campaigns/frontDoor.js";
import { BadRequestError } from "../../../errors.js";
import { isUuid } from "../../../ids.js";
import { validate } from "../../validate.js";
import { actorOf } from "./auth.js";

/**
 * Access campaigns over the JSON API (docs/access-review.md, "Campaigns"). The bearer token is the
 * admin's; `as` (query or body) names the reviewer it acts for (their SAML NameID), as the CLI's
 * `--as` does, so a reviewer's own items and decisions are theirs; what it records names the token
 * with them (`admin-api as kate@…`).
 */
export function campaignsApiRouter(campaigns: Campaigns): Router {
  const router = Router();

  router.get("/campaigns", async (_req, res) => {
    res.json({ campaigns: await campaigns.list() });
  });

  router.post("/campaigns", async (req, res) => {
    res
      .status(201)
      .json(await campaigns.start(validate(startCampaignSchema, body(req)), deciderOf(reviewerOf(req, res))));
  });

  router.get("/campaigns/:id", async (req, res) => {
    res.json(await campaigns.detail(String(req.params.id)));
  });

  router.get("/campaigns/:id/items", async (req, res) => {
    res.json(
      await campaigns.items(
        String(req.params.id),
        reviewerOf(req, res),
        validate(campaignItemsQuerySchema, req.query, "query"),
      ),
    );
  });

  router.post("/campaigns/:id/decisions", async (req, res) => {
    res.json(await campaigns.decide(String(req.params.id), reviewerOf(req, res), validate(decideSchema, body(req))));
  });

  router.post("/campaigns/:id/close", async (req, res) => {
    res.json(await campaigns.close(String(req.params.id), deciderOf(reviewerOf(req, res))));
  });

  router.get("/denies", async (req, res) => {
    const userId = typeof req.query.user === "string" ? req.query.user : undefined;
    if (userId !== undefined && !isUuid(userId)) throw new BadRequestError("user: a user id");
    res.json({
      denies: await campaigns.denies({ ...(userId ? { userId } : {}), activeOnly: req.query.active === "true" }),
    });
  });

  router.post("/denies/:id/lift", async (req, res) => {
    res.json(await campaigns.liftDeny(String(req.params.id), deciderOf(reviewerOf(req, res))));
  });
  return router;
}

function body(req: Request): Record<string, unknown> {
  const value: unknown = req.body;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new BadRequestError("Send a JSON object (Content-Type: application/json)");
  return value as Record<string, unknown>;
}

function reviewerOf(req: Request, res: Response): Reviewer {
  const raw: unknown = req.method === "GET" ? req.query.as : (req.body as { as?: unknown } | undefined)?.as;
  if (raw === undefined) return { name: actorOf(res), role: "admin" };
  if (typeof raw !== "string" || !raw.trim() || raw.length > 320) throw new BadRequestError("as: a reviewer's name");
  return { name: checkReviewerName(raw.trim()), role: "admin", principal: actorOf(res) };
}

import { z } from "zod";
import type { Clock } from "../../clock.js";
import type { Database, Queryable } from "../../db/database.js";
import { getCampaign, type Campaign } from "../../db/campaigns/campaignRepository.js";
import { BadRequestError, NotFoundError } from "../../errors.js";
import { isUuid } from "../../ids.js";
import { canonicalReviewerName, reviewerNameProblem } from "./reviewerName.js";

/** What the campaign use cases share: their collaborators, input schemas and lookups. */

export type CampaignDeps = { db: Database; clock: Clock };
/**
 * Who acts: the SAML NameID (or CLI/API name) and the admin role; `principal` is who authenticated
 * when it is not the reviewer (the admin API's bearer token or a CLI's OS account acting `as` them).
 */
export type Reviewer = { name: string; role: string; principal?: string };

/**
 * The decider a record names: the reviewer, after the principal that acted for them
 * (`admin-api as kate@…`, `cli:<os user> as kate@…`), so no sign-off is in a bare name nobody gave.
 */
export const deciderOf = (who: Reviewer): string => (who.principal ? `${who.principal} as ${who.name}` : who.name);

/**
 * Reviewers are named by SAML NameID, which IdPs treat without regard to case (Okta's usernames,
 * Entra's UPNs: `Jane.Doe@…` signs in as `jane.doe@…` after a rename), so a campaign stores the
 * names it is given in canonical form (NFKC, ASCII letters in lower case: src/review/campaigns/reviewerName.ts)
 * and a signed-in reviewer is matched in that form too. A name that reads as another is refused.
 */
const reviewerName = z
  .string()
  .trim()
  .min(1)
  .max(320)
  .superRefine((name, ctx) => {
    const problem = name.startsWith("role:") ? undefined : reviewerNameProblem(name);
    if (problem) ctx.addIssue({ code: "custom", message: `this name ${problem}` });
  })
  .transform((name) => (name.startsWith("role:") ? name : canonicalReviewerName(name)));

const reviewerRule = z
  .object({
    name: reviewerName.optional(),
    role: z.enum(["admin", "viewer"]).optional(),
    workspace: z.string().trim().min(1).max(200).optional(),
  })
  .refine((r) => (r.name === undefined) !== (r.role === undefined), "give a reviewer's name or a role (one of them)");

export const startCampaignSchema = z.object({
  name: z.string().trim().min(1).max(200),
  scope: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("everything") }),
    z.object({ kind: z.literal("company-admins") }),
    z.object({ kind: z.literal("workspace"), workspace: z.string().trim().min(1).max(200) }),
    z.object({ kind: z.literal("permission"), permission: z.string().trim().min(1).max(200) }),
    z.object({ kind: z.literal("groups"), groups: z.array(z.string().trim().min(1).max(256)).min(1).max(100) }),
    z.object({ kind: z.literal("not-signed-in"), days: z.coerce.number().int().min(1).max(3650) }),
    z.object({ kind: z.literal("unmanaged") }),
  ]),
  dueAt: z.iso.datetime({ offset: true }),
  reviewers: z.array(reviewerRule).max(50).default([]),
  /** A SAML NameID, or `role:admin` / `role:viewer`. */
  fallbackReviewer: reviewerName,
});

export const decideSchema = z
  .object({
    items: z
      .array(z.string().regex(/^\d{1,18}$/, "an item id"))
      .min(1)
      .max(1000),
    decision: z.enum(["keep", "revoke"]),
    comment: z.string().trim().max(2000).optional(),
    /**
     * What a revoke does to an account made by hand (an `unmanaged` campaign's item): `strip` (the
     * default: one PUT taking its permissions away) or `delete` (one DELETE, once an admin approves).
     */
    removal: z.enum(["strip", "delete"]).optional(),
  })
  .refine((d) => d.decision !== "revoke" || (d.comment ?? "") !== "", {
    message: "a revoke needs a comment saying why",
    path: ["comment"],
  })
  .refine((d) => d.removal === undefined || d.decision === "revoke", {
    message: "removal goes with a revoke only",
    path: ["removal"],
  });

/** What the routes and the CLI validate (http/validate.ts) before they call the use cases. */
export type StartCampaignInput = z.output<typeof startCampaignSchema>;
export type DecideInput = z.output<typeof decideSchema>;

export const fallbackKey = (fallback: string) => (fallback.startsWith("role:") ? fallback : `name:${fallback}`);

/**
 * The reviewer keys a signed-in user answers to: their name in canonical form, as campaigns store
 * it, and as given (campaigns started before names were stored so), and their role. A name that
 * reads as another (a session signed in before such names were refused) answers to its role only.
 */
export const keysOf = (who: Reviewer) => [
  ...(reviewerNameProblem(who.name) ? [] : nameKeys(who.name)),
  `role:${who.role}`,
];

/** The stored keys a reviewer filter (`name:…` or `role:…`) matches, case aside for names. */
export function keysMatching(key: string): string[] {
  if (!key.startsWith("name:")) return [key];
  const name = key.slice("name:".length);
  const problem = reviewerNameProblem(name);
  if (problem) throw new BadRequestError(`reviewer: this name ${problem}`);
  return nameKeys(name);
}

const nameKeys = (name: string) => [...new Set([`name:${canonicalReviewerName(name)}`, `name:${name}`])];

/** A reviewer named by `as` (the JSON API) or `--as` (the CLI): refused when the name reads as another. */
export function checkReviewerName(name: string): string {
  const problem = reviewerNameProblem(name);
  if (problem) throw new BadRequestError(`as: this name ${problem}`);
  return name;
}

export async function campaignOr404(db: Queryable, id: string, forUpdate = false): Promise<Campaign> {
  const campaign = isUuid(id) ? await getCampaign(db, id, forUpdate) : undefined;
  if (!campaign) throw new NotFoundError("No campaign with that id");
  return campaign;
}

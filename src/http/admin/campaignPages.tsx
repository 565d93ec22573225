import { Router, type Request, type Response } from "express";
import {
  campaignItemsQuerySchema,
  decideSchema,
  startCampaignSchema,
  type Reviewer,
} from "../../review/campaigns/index.js";
import type { Campaigns } from "../../review/campaigns/frontDoor.js";
import { actorForLog } from "../../admin/adminActor.js";
import { AppError, BadRequestError } from "../../errors.js";
import { log } from "../../logging/logger.js";
import { validate } from "../validate.js";
import { requireAction } from "./policy.js";
import { can, type AdminAction } from "../../policy.js";
import { saveSession } from "./session/index.js";
import { pageContext, renderMessagePage, renderPage } from "./ui/render.js";
import { CampaignsPage } from "./ui/pages/campaigns.js";
import { CAMPAIGN_FORM_FIELDS, CampaignPage, type CampaignForm } from "./ui/pages/campaign.js";

/**
 * The campaign pages (docs/access-review.md, "Campaigns"): the list and the start form, one
 * campaign's items for the signed-in reviewer, and the buttons (keep, revoke, close, lift). They
 * call the same use cases as /admin/api/campaigns and the CLI, as the signed-in actor: a viewer
 * decides their own items only (the use case answers 403 otherwise). CSRF was checked before this
 * router. A refused decision answers its status (400, 403, 404, 409) with the reason, nothing decided.
 */

const PAGE_SIZE = 50;

const reviewerOf = (req: Request): Reviewer => ({ name: req.adminActor!.name, role: req.adminActor!.role });
const body = (req: Request) => (req.body ?? {}) as Record<string, unknown>;
const text = (req: Request, name: string) => {
  const v = body(req)[name];
  return typeof v === "string" ? v.trim() : "";
};

/** The filters a form carried back (only the page's own fields), for the redirect to the same view. */
function filtersOf(req: Request): string {
  const given = new URLSearchParams(text(req, "filters").slice(0, 2000));
  return new URLSearchParams(
    CAMPAIGN_FORM_FIELDS.flatMap((k) => (given.get(k) ? [[k, given.get(k)!]] : [])),
  ).toString();
}

function formOf(req: Request): CampaignForm {
  const form: CampaignForm = {};
  for (const key of [...CAMPAIGN_FORM_FIELDS, "cursor"] as const) {
    const v = req.query[key];
    if (typeof v === "string" && v.trim()) form[key] = v.trim().slice(0, 330);
  }
  return form;
}

export function campaignRoutes(campaigns: Campaigns): Router {
  const router = Router();
  const base = (req: Request) => req.baseUrl || "/admin";
  const campaignUrl = (req: Request, id: string) => {
    const filters = filtersOf(req);
    return `${base(req)}/campaigns/${encodeURIComponent(id)}${filters ? `?${filters}` : ""}`;
  };

  router.get("/campaigns", async (req, res) => {
    const list = await campaigns.list();
    renderPage(res, "Campaigns", <CampaignsPage campaigns={list} ctx={pageContext(req)} />, { nav: "campaigns" });
  });

  router.get("/campaigns/:id", async (req, res) => {
    const id = String(req.params.id);
    const form = formOf(req);
    const who = reviewerOf(req);
    const admin = can(req.adminActor!.role, "campaign");
    const campaign = await campaigns.of(id);
    const [items, denies] = await Promise.all([
      campaigns.items(
        id,
        who,
        validate(
          campaignItemsQuerySchema,
          { ...form, reviewer: form.reviewer ?? (admin ? "all" : "mine"), limit: String(PAGE_SIZE) },
          "query",
        ),
        { counts: true },
      ),
      admin ? campaigns.denies({ campaignId: id }, 200) : null,
    ]);
    renderPage(
      res,
      campaign.name,
      <CampaignPage
        campaign={campaign}
        items={items}
        denies={denies}
        form={form}
        undecidedAtClose={campaigns.undecidedAtClose}
        ctx={pageContext(req)}
      />,
      { nav: "campaigns" },
    );
  });

  const act = (path: string, action: AdminAction, run: (req: Request) => Promise<{ message: string; back: string }>) =>
    router.post(path, requireAction(action), async (req: Request, res: Response) => {
      const actor = req.adminActor!;
      try {
        const { message, back } = await run(req);
        log.info("admin", "admin action", {
          action: path,
          actor: actorForLog(actor.name),
          role: actor.role,
          via: actor.via,
        });
        req.session.flash = { kind: "ok", text: message };
        await saveSession(req); // before the redirect, which the browser follows as soon as it arrives
        res.redirect(303, back);
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        log.info("admin", "admin action refused", {
          action: path,
          actor: actorForLog(actor.name),
          reason: error.message,
        });
        const id = typeof req.params.id === "string" ? req.params.id : undefined;
        renderMessagePage(
          res,
          error.status,
          "Not done",
          `${error.message}. Nothing was decided.`,
          <p>
            <a href={id && path.startsWith("/campaigns/") ? campaignUrl(req, id) : `${base(req)}/campaigns`}>
              Back to the campaign
            </a>
          </p>,
        );
      }
    });

  act("/campaigns", "campaign", async (req) => {
    const started = await campaigns.start(validate(startCampaignSchema, startInput(req)), req.adminActor!.name);
    return {
      message: `Campaign "${started.name}" started with ${started.items} items.`,
      back: `${base(req)}/campaigns/${started.id}`,
    };
  });

  act("/campaigns/:id/keep", "review", async (req) => {
    const id = String(req.params.id);
    const items = selected(req);
    if (!items.length) throw new BadRequestError("Select at least one item to keep");
    const result = await campaigns.decide(id, reviewerOf(req), validate(decideSchema, { items, decision: "keep" }));
    return { message: decidedWords(result, "Kept"), back: campaignUrl(req, id) };
  });

  act("/campaigns/:id/revoke", "review", async (req) => {
    const id = String(req.params.id);
    const items = selected(req);
    if (!items.length) throw new BadRequestError("Choose the item to revoke");
    const result = await campaigns.decide(
      id,
      reviewerOf(req),
      validate(decideSchema, {
        items,
        decision: "revoke",
        comment: text(req, "comment"),
        ...(text(req, "removal") ? { removal: text(req, "removal") } : {}),
      }),
    );
    return {
      message: `${decidedWords(result, "Revoked")} The grant leaves the platform at the user's next reconcile, queued now.`,
      back: campaignUrl(req, id),
    };
  });

  act("/campaigns/:id/close", "campaign", async (req) => {
    const id = String(req.params.id);
    const closed = await campaigns.close(id, req.adminActor!.name);
    const s = closed.closeSummary;
    return {
      message: s
        ? `Campaign closed: ${s.kept} kept, ${s.revoked} revoked, ${s.undecided} undecided (${s.undecidedAction === "keep" ? "kept, reported" : "revoked"}).`
        : "Campaign closed.",
      back: campaignUrl(req, id),
    };
  });

  act("/denies/:denyId/lift", "campaign", async (req) => {
    const lifted = await campaigns.liftDeny(String(req.params.denyId), req.adminActor!.name);
    return {
      message: `Deny lifted: ${lifted.userName} may hold ${lifted.grant} again (reconcile queued).`,
      back: lifted.campaignId ? campaignUrl(req, lifted.campaignId) : `${base(req)}/campaigns`,
    };
  });

  return router;
}

/** The checked items (`item`, repeated) or the one item of a row's form. */
function selected(req: Request): string[] {
  const raw = body(req).item;
  return (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(String).filter(Boolean);
}

function decidedWords(result: { decided: number; skipped: string[] }, verb: string): string {
  const items = (n: number) => `${n} item${n === 1 ? "" : "s"}`;
  const skipped = result.skipped.length
    ? ` ${items(result.skipped.length)} no longer open (decided meanwhile, or not in this campaign) were left as they were.`
    : "";
  return `${verb} ${items(result.decided)}.${skipped}`;
}

/**
 * The start form as the use case's input: the scope's one text field read for the kind chosen,
 * reviewers one per line (`workspace = reviewer` or a reviewer alone), `role:admin` for a role.
 */
function startInput(req: Request): Record<string, unknown> {
  const kind = text(req, "scope");
  const value = text(req, "scopeValue");
  const scope =
    kind === "workspace"
      ? { kind, workspace: value }
      : kind === "permission"
        ? { kind, permission: value }
        : kind === "groups"
          ? {
              kind,
              groups: value
                .split(",")
                .map((g) => g.trim())
                .filter(Boolean),
            }
          : kind === "not-signed-in"
            ? { kind, days: value }
            : { kind };
  const due = text(req, "dueAt");
  const reviewers = text(req, "reviewers")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const eq = line.lastIndexOf("=");
      const who = (eq >= 0 ? line.slice(eq + 1) : line).trim();
      const workspace = eq >= 0 ? line.slice(0, eq).trim() : undefined;
      return {
        ...(who.startsWith("role:") ? { role: who.slice(5) } : { name: who }),
        ...(workspace ? { workspace } : {}),
      };
    });
  return {
    name: text(req, "name"),
    scope,
    // A datetime-local value has no zone: it is read as UTC, as the form says.
    dueAt: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(due) ? `${due}:00Z` : due,
    reviewers,
    fallbackReviewer: text(req, "fallbackReviewer"),
  };
}

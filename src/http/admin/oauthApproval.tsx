import { Router, type Request, type Response } from "express";
import {
  AuthorizePageError,
  type AuthorizationCodes,
  type AuthorizeRequest,
} from "../../auth/oauth/authorizationCode.js";
import { actorForLog } from "../../admin/adminActor.js";
import { log } from "../../logging/logger.js";
import { requireAction } from "./policy.js";
import { ActionButton, Facts, Section } from "./ui/components/basics.js";
import { pageContext, renderMessagePage, renderPage } from "./ui/render.js";

/**
 * The OAuth authorization endpoint's page (/oauth/authorize redirects here, with its query): an
 * admin signed in to the admin UI (SAML, admin role) sees which client asks and where the code
 * will go, and approves or denies with a CSRF-checked form. The request is checked again from the
 * form (hidden fields are not trusted); an unknown client or redirect URI is shown, never followed.
 */

const PARAMS = ["client_id", "redirect_uri", "response_type", "state", "code_challenge", "code_challenge_method"];

export function oauthApprovalRoutes(codes: AuthorizationCodes | undefined): Router {
  const router = Router();
  if (!codes) return router;
  router.get("/oauth/authorize", requireAction("oauthApprove"), async (req, res) => {
    const checked = await check(codes, paramsOf(req.query), res);
    if (checked) renderApproval(req, res, checked);
  });
  router.post("/oauth/authorize", requireAction("oauthApprove"), async (req, res) => {
    const form = paramsOf(req.body);
    const checked = await check(codes, form, res);
    if (!checked) return;
    const actor = req.adminActor!;
    const approved = (req.body as Record<string, unknown>)["decision"] === "approve";
    log.info("admin", approved ? "oauth client approved" : "oauth client denied", {
      client: checked.clientName,
      actor: actorForLog(actor.name),
    });
    res.redirect(303, approved ? await codes.approve(checked, actor.name) : codes.deny(checked));
  });
  return router;
}

async function check(
  codes: AuthorizationCodes,
  params: Record<string, string | undefined>,
  res: Response,
): Promise<AuthorizeRequest | undefined> {
  try {
    const checked = await codes.check(params);
    if (checked.kind === "show") return checked.request;
    res.redirect(303, checked.location);
  } catch (error) {
    if (!(error instanceof AuthorizePageError)) throw error;
    renderMessagePage(res, 400, "Authorization request refused", error.message);
  }
  return undefined;
}

function paramsOf(source: unknown): Record<string, string | undefined> {
  const record = (source ?? {}) as Record<string, unknown>;
  return Object.fromEntries(PARAMS.map((name) => [name, typeof record[name] === "string" ? record[name] : undefined]));
}

function renderApproval(req: Request, res: Response, request: AuthorizeRequest): void {
  const ctx = pageContext(req);
  const hidden = Object.fromEntries(
    Object.entries({
      client_id: request.clientName,
      redirect_uri: request.redirectUri,
      response_type: "code",
      state: request.state,
      code_challenge: request.codeChallenge,
      code_challenge_method: request.codeChallengeMethod,
    }).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  renderPage(
    res,
    "Approve an OAuth client",
    <Section title="Approve an OAuth client">
      <p>
        The client <code>{request.clientName}</code> asks for a token to provision users into this connector (the SCIM
        API). Approve only if you started this from your IdP's admin console.
      </p>
      <Facts
        items={[
          ["Client", <code>{request.clientName}</code>],
          ["Code sent to", <code>{request.redirectUri}</code>],
          ["PKCE", request.codeChallenge ? `yes (${request.codeChallengeMethod})` : "no"],
        ]}
      />
      <ActionButton
        action={`${ctx.basePath}/oauth/authorize`}
        csrf={ctx.csrf}
        label="Approve"
        hidden={{ ...hidden, decision: "approve" }}
      />{" "}
      <ActionButton
        action={`${ctx.basePath}/oauth/authorize`}
        csrf={ctx.csrf}
        label="Deny"
        danger
        hidden={{ ...hidden, decision: "deny" }}
      />
    </Section>,
  );
}

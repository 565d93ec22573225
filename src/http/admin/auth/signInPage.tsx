import type { Request, Response } from "express";
import { csrfToken } from "../csrf.js";
import { renderBarePage } from "../ui/render.js";
import type { AdminAuthMode } from "../exposure.js";

/** The sign-in page: an SSO link in SAML mode, the ADMIN_TOKEN form in local mode. */
export function renderSignInPage(
  req: Request,
  res: Response,
  mode: AdminAuthMode,
  problem?: string,
  problemStatus = 401,
): void {
  const base = req.baseUrl || "/admin";
  const status = problem ? problemStatus : 200;
  const signedOut = req.query.signedOut === "1";
  if (mode === "saml") {
    renderBarePage(
      res,
      "Sign in",
      <div class="stack">
        {signedOut ? <p class="flash flash-ok">You are signed out.</p> : null}
        <p>Sign in with your organisation's single sign-on to see and act on what the connector does.</p>
        <a class="button sso" href={`${base}/saml/login`}>
          Sign in with single sign-on
        </a>
      </div>,
      status,
    );
    return;
  }
  renderBarePage(
    res,
    "Sign in",
    <form method="post" action={`${base}/login`} class="stack">
      {signedOut ? <p class="flash flash-ok">You are signed out.</p> : null}
      {problem ? (
        <p class="flash flash-error" role="alert">
          {problem}
        </p>
      ) : null}
      <input type="hidden" name="_csrf" value={csrfToken(req)} />
      <div class="form-row">
        <label for="token">Admin token</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
        <span class="hint">
          Local mode: single sign-on is not configured. The token is ADMIN_TOKEN, printed by <code>npm start</code>.
        </span>
      </div>
      <button type="submit" class="button">
        Sign in
      </button>
    </form>,
    status,
  );
}

import type { Request, Response } from "express";
import type { ComponentChildren, VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import { csrfToken } from "../csrf.js";
import { Layout, type NavKey, type PageContext, SimpleLayout } from "./layout.js";

/**
 * Page rendering for the admin UI. Everything goes through preact's server renderer, which
 * escapes text and attributes by default; no page builds HTML by concatenating strings.
 */

/** What a page component needs to build forms and links: the actor, the CSRF token, "/admin". */
export function pageContext(req: Request): PageContext {
  if (!req.adminActor) throw new Error("pageContext needs a signed-in request");
  return { actor: req.adminActor, csrf: csrfToken(req), basePath: req.baseUrl || "/admin" };
}

export function renderPage(
  res: Response,
  title: string,
  body: ComponentChildren,
  options: { nav?: NavKey; status?: number } = {},
): void {
  const req = res.req;
  const flash = req.session?.flash;
  if (flash) delete req.session.flash;
  const page = (
    <Layout title={title} nav={options.nav} context={pageContext(req)} flash={flash}>
      {body}
    </Layout>
  );
  send(res, options.status ?? 200, page);
}

/** A full page with a heading and one message: sign-in failures, 403s, 404s. Works signed in or not. */
export function renderMessagePage(
  res: Response,
  status: number,
  title: string,
  message: string,
  extra?: ComponentChildren,
): void {
  const basePath = res.req.baseUrl || "/admin";
  send(
    res,
    status,
    <SimpleLayout title={title} basePath={basePath}>
      <p class="message">{message}</p>
      {extra}
      <p>
        <a href={`${basePath}`}>Back to the admin console</a>
      </p>
    </SimpleLayout>,
  );
}

/** A page outside the signed-in frame (the sign-in page). */
export function renderBarePage(res: Response, title: string, body: ComponentChildren, status = 200): void {
  send(
    res,
    status,
    <SimpleLayout title={title} basePath={res.req.baseUrl || "/admin"}>
      {body}
    </SimpleLayout>,
  );
}

function send(res: Response, status: number, page: VNode): void {
  res.status(status);
  res.type("html");
  res.setHeader("Cache-Control", "no-store");
  res.send(`<!doctype html>${renderToString(page)}`);
}

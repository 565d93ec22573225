import type { ComponentChildren } from "preact";
import type { AdminActor } from "../../../admin/adminActor.js";

/** What a page component needs to build forms and links: the actor, the CSRF token, "/admin". */
export type PageContext = { actor: AdminActor; csrf: string; basePath: string };

export type NavKey =
  | "overview"
  | "log"
  | "users"
  | "mapping"
  | "approvals"
  | "runs"
  | "mirror"
  | "notifications"
  | "access"
  | "campaigns"
  | "credentials"
  | "platform";

const NAV: { key: NavKey; label: string; path: string }[] = [
  { key: "overview", label: "Overview", path: "" },
  { key: "log", label: "Reconciliation log", path: "/log" },
  { key: "users", label: "Users", path: "/users" },
  { key: "mapping", label: "Mapping", path: "/mapping" },
  { key: "access", label: "Access review", path: "/access" },
  { key: "campaigns", label: "Campaigns", path: "/campaigns" },
  { key: "approvals", label: "Approvals", path: "/approvals" },
  { key: "runs", label: "Runs", path: "/runs" },
  { key: "mirror", label: "Mirror", path: "/mirror" },
  { key: "notifications", label: "Notifications", path: "/notifications" },
  { key: "platform", label: "Platform record", path: "/platform" },
  { key: "credentials", label: "Credentials", path: "/credentials" },
];

function Head({ title, basePath }: { title: string; basePath: string }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${title} · scim-connector`}</title>
      <link rel="stylesheet" href={`${basePath}/assets/admin.css`} />
    </head>
  );
}

export function Layout(props: {
  title: string;
  nav?: NavKey;
  context: PageContext;
  flash?: { kind: "ok" | "error"; text: string };
  children: ComponentChildren;
}) {
  const { actor, csrf, basePath } = props.context;
  return (
    <html lang="en">
      <Head title={props.title} basePath={basePath} />
      <body>
        <header class="topbar">
          <a class="brand" href={basePath}>
            scim-connector
          </a>
          <nav aria-label="Sections">
            <ul>
              {NAV.map((item) => (
                <li>
                  <a href={`${basePath}${item.path}`} aria-current={item.key === props.nav ? "page" : undefined}>
                    {item.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="who">
            <span class="who-name">{actor.name}</span>
            <span class={`badge badge-role-${actor.role}`}>{actor.role}</span>
            <form method="post" action={`${basePath}/logout`}>
              <input type="hidden" name="_csrf" value={csrf} />
              <button type="submit" class="link-button">
                Sign out
              </button>
            </form>
          </div>
        </header>
        <main>
          <h1>{props.title}</h1>
          {props.flash ? (
            <p class={`flash flash-${props.flash.kind}`} role="status">
              {props.flash.text}
            </p>
          ) : null}
          {props.children}
        </main>
      </body>
    </html>
  );
}

export function SimpleLayout(props: { title: string; basePath: string; children: ComponentChildren }) {
  return (
    <html lang="en">
      <Head title={props.title} basePath={props.basePath} />
      <body class="simple">
        <main class="narrow">
          <p class="brand">scim-connector</p>
          <h1>{props.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}

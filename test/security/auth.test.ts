import { execFile } from "node:child_process";
import crypto, { createHash } from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import type { NextFunction, Request, Response } from "express";
import request from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { hashToken, ScimTokenVerifier } from "../../src/auth/scimTokens.js";
import { TokenRepository } from "../../src/db/auth/tokenRepository.js";
import { requireAdminToken } from "../../src/http/admin/api/auth.js";
import { adminTokenMatches } from "../../src/http/admin/auth/localToken.js";
import { makeIdpKeys } from "../support/saml.js";
import { ADMIN_TOKEN, IDP_TOKEN, startStack, type Stack } from "../support/stack.js";
import { appListeningOn, concretePath, enumerateRoutes, type RouteEntry } from "./routes.js";
import { METRICS_TOKEN, ERROR_SCHEMA } from "../support/constants.js";

/**
 * Nobody gets in without credentials. Every route of the running service (read from its Express
 * router stack) is called without credentials and with near-miss ones; only the routes listed in
 * PUBLIC may answer, and each of those is checked to give nothing away. Then: IdP tokens are
 * hashed at rest, a revoked token stops working, and every token check compares equal-length
 * digests with timingSafeEqual whatever the length of what was presented.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const SAML_ACS = "https://scim.example.test/admin/saml/acs";

/** Routes that answer without credentials, and why that is safe. A route not here must refuse. */
const PUBLIC: Record<string, string> = {
  "GET /healthz": "liveness probe: says only {status: ok}",
  "GET /readyz": "readiness probe: says only ready or not (and why)",
  "GET /admin/assets/admin.css": "the UI stylesheet",
  "GET /admin/login": "the sign-in page",
  "POST /admin/login": "local sign-in itself: CSRF-checked, needs ADMIN_TOKEN (checked below)",
  "POST /admin/logout": "ends the caller's own session; CSRF-checked",
  "GET /admin/saml/metadata": "SP metadata (public by design: the IdP fetches it)",
  "GET /admin/saml/login": "redirect to the IdP",
  "POST /admin/saml/acs": "the IdP posts signed responses here (checked below: unsigned → refused)",
  "POST /oauth/token":
    "the OAuth token endpoint: the client authenticates in the request itself (refusals: test/security/oauthToken.test.ts)",
  "GET /oauth/authorize": "a redirect to the admin UI's approval page, which needs an admin session",
};

type Surface = "scim" | "adminApi" | "adminUi" | "metrics";
function surfaceOf(route: RouteEntry): Surface {
  if (route.path.startsWith("/scim/v2")) return "scim";
  if (route.path.startsWith("/admin/api")) return "adminApi";
  if (route.path.startsWith("/admin")) return "adminUi";
  if (route.path === "/metrics") return "metrics";
  throw new Error(
    `route ${route.method} ${route.path} belongs to no known surface: add it to PUBLIC (with a reason) or to a surface`,
  );
}

function send(stack: Stack, route: { method: string; path: string }, headers: Record<string, string>) {
  const agent = request(stack.service.url);
  const method = route.method.toLowerCase() as "get" | "post" | "put" | "patch" | "delete" | "head";
  let req = agent[method](concretePath(route.path)).redirects(0);
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  if (["POST", "PUT", "PATCH"].includes(route.method)) {
    req =
      route.path.startsWith("/admin") && !route.path.startsWith("/admin/api")
        ? req.type("form").send({ all: "1", token: ADMIN_TOKEN })
        : req.set("Content-Type", "application/json").send("{}");
  }
  return req;
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Near misses of a valid token: each must be refused. */
function nearMisses(valid: string, other: string, revoked?: string): [string, Record<string, string>][] {
  const inner = `${valid.slice(0, 8)} ${valid.slice(8)}`;
  return [
    ["no credentials", {}],
    ["a wrong token", bearer("definitely-not-the-token-0000000000")],
    ["the token upper-cased", bearer(valid.toUpperCase())],
    ["the token with a space inside", bearer(inner)],
    ["the token less its last character", bearer(valid.slice(0, -1))],
    ["the token plus a character", bearer(`${valid}x`)],
    ["the token twice", bearer(`${valid}${valid}`)],
    ["the token without the Bearer scheme", { Authorization: valid }],
    ["the token as Basic credentials", { Authorization: `Basic ${Buffer.from(`admin:${valid}`).toString("base64")}` }],
    ["the token in a query-string-like header", { "X-Api-Key": valid, "X-Auth-Token": valid }],
    ["an empty bearer", { Authorization: "Bearer " }],
    ["the other surface's token", bearer(other)],
    ...(revoked ? ([["a revoked token", bearer(revoked)]] as [string, Record<string, string>][]) : []),
  ];
}

async function cli(stack: Stack, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [path.join(ROOT, "bin/scim-connector.js"), ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: stack.database.url, MAPPING_FILE: stack.mappingFile, LOG_LEVEL: "error" },
  });
  return stdout;
}

for (const mode of ["local", "saml"] as const) {
  describe(`every route refuses without valid credentials (${mode} sign-in)`, () => {
    let stack: Stack;
    let routes: RouteEntry[];
    let revoked: string;

    beforeAll(async () => {
      const saml: Record<string, string> =
        mode === "saml"
          ? {
              SAML_ENTRY_POINT: "https://idp.example.test/sso",
              SAML_ISSUER: "https://scim.example.test/admin/saml/metadata",
              SAML_IDP_CERT: makeIdpKeys().cert,
              SAML_CALLBACK_URL: SAML_ACS,
            }
          : {};
      // Hundreds of wrong credentials from one address: the failed-auth throttles (test/security/throttle.test.ts) stay out of the way.
      stack = await startStack({
        workers: false,
        env: { METRICS_TOKEN, AUTH_THROTTLE_PER_ADDRESS: "100000", AUTH_THROTTLE_GLOBAL: "100000", ...saml },
      });
      routes = enumerateRoutes(appListeningOn(stack.service.url));
      // A token made and revoked with the CLI, as an operator would.
      const created = await cli(stack, "token", "create", "--name", `revoked-${mode}`);
      revoked = /\n\s+(scim_\S+)\n/.exec(created)?.[1] ?? "";
      expect(revoked).toMatch(/^scim_/);
      expect(await cli(stack, "token", "revoke", `revoked-${mode}`)).toContain("Revoked 1 token");
    }, 120_000);
    afterAll(async () => stack?.close());

    it("finds the routes of every surface, and every PUBLIC route of this mode exists", () => {
      const names = new Set(routes.map((r) => `${r.method} ${r.path}`));
      for (const expected of [
        "GET /scim/v2/Users",
        "PATCH /scim/v2/Groups/:id",
        "GET /admin/api/log",
        "POST /admin/api/resync",
        "GET /admin",
        "POST /admin/users/:id/reconcile",
        "GET /metrics",
      ]) {
        expect(names).toContain(expected);
      }
      const publicHere = Object.keys(PUBLIC).filter((r) =>
        mode === "saml" ? r !== "POST /admin/login" : !r.includes("/saml/"),
      );
      for (const r of publicHere) expect(names, `${r} is listed as public but is no route`).toContain(r);
      expect(routes.length).toBeGreaterThan(40);
    });

    it("SCIM, the admin JSON API, /metrics and the admin UI refuse every near miss of a credential", async () => {
      const problems: string[] = [];
      let checked = 0;
      for (const route of routes.filter((r) => !PUBLIC[`${r.method} ${r.path}`])) {
        const surface = surfaceOf(route);
        const variants =
          surface === "scim"
            ? nearMisses(IDP_TOKEN, ADMIN_TOKEN, revoked)
            : surface === "adminApi"
              ? nearMisses(ADMIN_TOKEN, IDP_TOKEN, revoked)
              : surface === "metrics"
                ? nearMisses(METRICS_TOKEN, ADMIN_TOKEN)
                : ([
                    ...nearMisses(ADMIN_TOKEN, IDP_TOKEN),
                    ["the admin token as a bearer (the UI takes sessions only)", bearer(ADMIN_TOKEN)],
                    [
                      "a forged session cookie",
                      { Cookie: "scim_admin_sid=s%3Aforged-session-id.bm90LWEtc2lnbmF0dXJl" },
                    ],
                  ] as [string, Record<string, string>][]);
        for (const [name, headers] of variants) {
          const res = await send(stack, route, headers);
          checked++;
          const where = `${route.method} ${route.path} with ${name}: ${res.status}`;
          if (surface === "adminUi") {
            const toLogin = res.status === 303 && /\/admin\/login$/.test(String(res.headers.location));
            const refused = res.status === 401 || res.status === 403;
            if (route.method === "GET" ? !toLogin : !refused) problems.push(where);
          } else if (res.status !== 401 && res.status !== 403) problems.push(where);
          else if (
            surface === "scim" &&
            (res.status !== 401 || !res.body.schemas?.includes(ERROR_SCHEMA) || !res.headers["www-authenticate"])
          )
            problems.push(`${where} (not an RFC 7644 401 with WWW-Authenticate)`);
          else if (surface === "adminApi" && (res.status !== 401 || !res.headers["www-authenticate"]))
            problems.push(`${where} (no WWW-Authenticate)`);
        }
      }
      console.log(
        `auth (${mode}): ${routes.length} routes, ${checked} refused-credential requests, ${problems.length} answered`,
      );
      expect(problems).toEqual([]);
      expect(checked).toBeGreaterThan(500);
    }, 120_000);

    it("paths that are no route refuse before saying so (no probing of what exists)", async () => {
      for (const p of [
        "/scim/v2/Nope",
        "/scim/v2/Users/x/y",
        "/scim/v2/Bulk",
        "/scim/v2/Me",
        "/scim/v2/..%2F..%2Fadmin",
      ]) {
        for (const method of ["GET", "POST", "DELETE"])
          expect((await send(stack, { method, path: p }, {})).status, `${method} ${p}`).toBe(401);
      }
      for (const p of ["/admin/api/nope", "/admin/api/users", "/admin/api/../api/log"])
        expect((await send(stack, { method: "GET", path: p }, {})).status, p).toBe(401);
      for (const p of ["/admin/nope", "/admin/users/x/y", "/admin/.env"]) {
        const res = await send(stack, { method: "GET", path: p }, {});
        expect(res.status, p).toBe(303);
        expect(res.headers.location).toMatch(/\/admin\/login$/);
      }
    });

    it("with valid credentials the same routes do not answer 401 (the refusals above are about credentials)", async () => {
      const agent = request.agent(stack.service.url);
      for (const route of routes.filter(
        (r) => r.method === "GET" && !r.path.startsWith("/admin/") && r.path !== "/admin",
      )) {
        // Public routes (the probes, /oauth/*) take no credential.
        const surface = PUBLIC[`${route.method} ${route.path}`] ? undefined : surfaceOf(route);
        const token =
          surface === "scim"
            ? IDP_TOKEN
            : surface === "adminApi"
              ? ADMIN_TOKEN
              : surface === "metrics"
                ? METRICS_TOKEN
                : undefined;
        const res = await agent.get(concretePath(route.path)).set(token ? bearer(token) : {});
        expect([401, 403], `${route.path}: ${res.status}`).not.toContain(res.status);
      }
      for (const route of routes.filter((r) => r.method === "GET" && r.path.startsWith("/admin/api"))) {
        const res = await agent.get(concretePath(route.path)).set(bearer(ADMIN_TOKEN));
        expect([401, 403], `${route.path}: ${res.status}`).not.toContain(res.status);
      }
    });

    if (mode === "local") {
      it("a signed-in UI session authorizes neither the JSON API nor SCIM, and a wrong token signs no one in", async () => {
        const agent = request.agent(stack.service.url);
        const csrf = async () => /name="_csrf" value="([^"]+)"/.exec((await agent.get("/admin/login")).text)![1]!;
        // The agent attaches its cookies when a request is made: take the form's token first.
        const first = await csrf();
        const wrong = await agent
          .post("/admin/login")
          .type("form")
          .send({ _csrf: first, token: ADMIN_TOKEN.toUpperCase() });
        expect(wrong.status).toBe(401);
        expect(wrong.text).toContain("That token is not right");
        expect((await agent.get("/admin").redirects(0)).status).toBe(303);
        const second = await csrf();
        const good = await agent.post("/admin/login").type("form").send({ _csrf: second, token: ADMIN_TOKEN });
        expect(good.status).toBe(303);
        expect((await agent.get("/admin")).status).toBe(200);
        // The cookie is scoped to /admin; send it explicitly everywhere else.
        const cookie = String(
          [good.headers["set-cookie"]].flat().find((c) => String(c).startsWith("scim_admin_sid=")),
        ).split(";")[0]!;
        expect((await request(stack.service.url).get("/admin/api/budget").set("Cookie", cookie)).status).toBe(401);
        expect((await request(stack.service.url).get("/scim/v2/Users").set("Cookie", cookie)).status).toBe(401);
        expect((await request(stack.service.url).get("/metrics").set("Cookie", cookie)).status).toBe(401);
      });
    } else {
      it("the ACS refuses a response that is not signed by the IdP, and starts no session", async () => {
        const agent = request.agent(stack.service.url);
        const xml = `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_x" Version="2.0"><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:Response>`;
        const res = await agent
          .post("/admin/saml/acs")
          .type("form")
          .send({ SAMLResponse: Buffer.from(xml).toString("base64") });
        expect([400, 401, 403]).toContain(res.status);
        expect((await agent.get("/admin").redirects(0)).status).toBe(303);
        // Local sign-in does not exist in SAML mode, even with the admin token.
        expect((await agent.post("/admin/login").type("form").send({ token: ADMIN_TOKEN })).status).toBe(401);
      });
    }
  });
}

describe("IdP tokens at rest and revocation", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workers: false });
  }, 120_000);
  afterAll(async () => stack?.close());

  it("scim_tokens holds a SHA-256 digest and a short prefix, never the token; a revoked token is refused within the verifier's cache window", async () => {
    const created = await cli(stack, "token", "create", "--name", "okta");
    const token = /\n\s+(scim_\S+)\n/.exec(created)![1]!;
    const rows: Record<string, unknown>[] = await stack.database.db.query(`SELECT * FROM scim_tokens`);
    expect(rows).toHaveLength(1);
    for (const [column, value] of Object.entries(rows[0]!)) {
      const text = Buffer.isBuffer(value)
        ? value.toString("latin1") + value.toString("hex") + value.toString("base64")
        : String(value);
      expect(text.includes(token), `column ${column} holds the token`).toBe(false);
      expect(text.includes(token.slice(5, 20)), `column ${column} holds a long piece of the token`).toBe(false);
    }
    expect(Buffer.compare(rows[0]!.token_hash as Buffer, createHash("sha256").update(token).digest())).toBe(0);
    expect(String(rows[0]!.token_prefix).length).toBeLessThanOrEqual(10);
    // The column types: no text column could hold it either.
    const columns: { column_name: string; data_type: string }[] = await stack.database.db.query(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'scim_tokens'`,
    );
    expect(columns.find((c) => c.column_name === "token_hash")?.data_type).toBe("bytea");

    const users = () => request(stack.service.url).get("/scim/v2/Users").set(bearer(token));
    expect((await users()).status).toBe(200); // used, so the verifier has it cached as valid
    expect(await cli(stack, "token", "revoke", "okta")).toContain("Revoked 1 token");
    const revokedAt = Date.now();
    let status = 200;
    await vi.waitFor(
      async () => {
        status = (await users()).status;
        if (status === 200) throw new Error("the revoked token is still accepted");
      },
      { timeout: 15_000, interval: 250 },
    );
    expect(status).toBe(401);
    // ScimTokenVerifier caches a verdict for 10 s: that, and no more, is how long a revoked token lives on.
    expect(Date.now() - revokedAt).toBeLessThan(11_000);
    // A token revoked before it was ever used is refused at once.
    const second = /\n\s+(scim_\S+)\n/.exec(await cli(stack, "token", "create", "--name", "entra"))![1]!;
    await cli(stack, "token", "revoke", "entra");
    expect((await request(stack.service.url).get("/scim/v2/Users").set(bearer(second))).status).toBe(401);
  }, 120_000); // four CLI processes and the 10 s cache window, on a loaded machine
});

describe("constant-time token checks", () => {
  const original = crypto.timingSafeEqual;
  let calls: { a: number; b: number }[] = [];
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ workers: false });
    // Wrap node:crypto's timingSafeEqual and push the wrapper into the ESM named exports that
    // the modules under test imported, so every comparison they make is recorded.
    crypto.timingSafeEqual = ((a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      calls.push({ a: a.byteLength, b: b.byteLength });
      return original(a, b);
    }) as typeof crypto.timingSafeEqual;
    syncBuiltinESMExports();
  }, 120_000);
  afterEach(() => {
    calls = [];
  });
  afterAll(async () => {
    crypto.timingSafeEqual = original;
    syncBuiltinESMExports();
    await stack?.close();
  });

  const PRESENTED = [
    "",
    "x",
    "short",
    IDP_TOKEN.slice(0, -1),
    IDP_TOKEN,
    `${IDP_TOKEN}x`,
    "y".repeat(512),
    "é".repeat(300),
  ];

  it("ScimTokenVerifier compares 32-byte digests whatever the presented length, for SCIM_TOKEN and stored tokens", async () => {
    const repo = new TokenRepository(stack.service.db);
    const stored = `scim_${"s".repeat(43)}`;
    await repo.create("stored", hashToken(stored), stored.slice(0, 10));
    const verifier = new ScimTokenVerifier(repo, IDP_TOKEN);
    for (const presented of PRESENTED) {
      calls = [];
      expect(await verifier.verify(presented)).toBe(presented === IDP_TOKEN);
      expect(calls.length, `no constant-time compare for a ${presented.length}-char token`).toBeGreaterThan(0);
      for (const c of calls) expect(c).toEqual({ a: 32, b: 32 });
    }
    calls = [];
    expect(await verifier.verify(stored)).toBe(true);
    // Against SCIM_TOKEN, then the stored hash re-checked after the lookup: both 32 bytes.
    expect(calls).toEqual([
      { a: 32, b: 32 },
      { a: 32, b: 32 },
    ]);
  });

  it("requireAdminToken and the local sign-in compare 32-byte digests whatever the presented length", () => {
    const middleware = requireAdminToken(ADMIN_TOKEN);
    for (const presented of [...PRESENTED, ADMIN_TOKEN, `  ${ADMIN_TOKEN}`]) {
      calls = [];
      let passed = false;
      let status = 200;
      const req = {
        get: (name: string) => (name.toLowerCase() === "authorization" ? `Bearer ${presented}` : undefined),
      } as unknown as Request;
      const res = {
        locals: {},
        setHeader: () => res,
        status: (s: number) => ((status = s), res),
        json: () => res,
      } as unknown as Response;
      middleware(req, res, (() => (passed = true)) as NextFunction);
      expect(passed).toBe(presented.trim() === ADMIN_TOKEN);
      expect(status).toBe(passed ? 200 : 401);
      // An empty bearer never reaches the comparison (the header does not parse); anything else does.
      expect(calls, `one constant-time compare of digests for a ${presented.length}-char token`).toEqual(
        presented.trim() ? [{ a: 32, b: 32 }] : [],
      );
      calls = [];
      expect(adminTokenMatches(presented, ADMIN_TOKEN)).toBe(presented === ADMIN_TOKEN);
      expect(calls).toEqual([{ a: 32, b: 32 }]);
    }
  });
});

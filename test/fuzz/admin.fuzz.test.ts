import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import {
  nastyString,
  prng,
  rawClient,
  runPool,
  STACK_LINE,
  type RawRequest,
  type RawResponse,
  type Rng,
  type TransportError,
} from "../support/fuzz.js";
import { authnRequestIdFromRedirect, encodeResponse, makeIdpKeys, signedResponse } from "../support/saml.js";
import { ADMIN_TOKEN, IDP_TOKEN, TEST_MAPPING, writeMappingFile } from "../support/stack.js";
import { ACS, SP_ENTITY } from "../support/constants.js";

/**
 * Fuzzes the admin UI, the admin API and the SAML routes of the connector as a real child
 * process (one in SAML mode, one in local mode): random methods on every route, bodies on GET,
 * odd and lying content types, broken multipart (bad part headers, truncation, too many parts),
 * valid signed SAMLResponses where they do not belong, with and without a signed-in session and
 * its CSRF token; a body is sent with its head, chunked, or late and in pieces (so its parser runs
 * from later socket reads). Whatever arrives: every request is answered (a route that drops the
 * connection instead is a failure), the process never exits, never answers 5xx, never shows a
 * stack trace, and still serves SCIM.
 *
 * Replay with FUZZ_SEED=<seed printed below>; FUZZ_ADMIN_REQUESTS changes the count per mode.
 */

const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const REQUESTS = Number(process.env.FUZZ_ADMIN_REQUESTS ?? 1500);
const CONCURRENCY = 8;

const METHODS = ["GET", "GET", "GET", "POST", "POST", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"];
const PATHS = [
  "/admin",
  "/admin/",
  "/admin/login",
  "/admin/logout",
  "/admin/saml/login",
  "/admin/saml/login",
  "/admin/saml/login",
  "/admin/saml/login?SAMLResponse=PHg%2B&RelayState=x",
  "/admin/saml/login?SAMLRequest=%%%",
  "/admin/saml/acs",
  "/admin/saml/metadata",
  "/admin/assets/admin.css",
  "/admin/log",
  "/admin/log/1",
  "/admin/log/%E0%A4%A",
  "/admin/log/export.csv?user=%27",
  "/admin/users?q=%00",
  "/admin/users/00000000-0000-0000-0000-000000000000",
  "/admin/users/x/reconcile",
  "/admin/approvals",
  "/admin/approvals/approve",
  "/admin/approvals/reject",
  "/admin/runs",
  "/admin/runs/resync",
  "/admin/mapping",
  "/admin/mapping/preview",
  "/admin/mirror",
  "/admin/quarantine/resume",
  "/admin/nope/../../etc/passwd",
  "/admin/api/log?limit=abc",
  "/admin/api/log?user=%00&action=%00",
  "/admin/log?user=%00&trigger=%00",
  "/admin/api/log/1",
  "/admin/api/budget",
  "/admin/api/queue",
  "/admin/api/approvals",
  "/admin/api/approvals/all/approve",
  "/admin/api/approvals/x/maybe",
  "/admin/api/users/x/reconcile",
  "/admin/api/resync",
  "/admin/api/mirror",
  "/admin/api/quarantine",
  "/admin/api/quarantine/users/resume",
  "/admin/api/mirror/parked/requeue",
  "/admin/api/notifications/test/webhook",
  "/admin/api/access?format=csv",
];
const CONTENT_TYPES = [
  undefined,
  "application/x-www-form-urlencoded",
  "application/x-www-form-urlencoded; charset=utf-16",
  "application/x-www-form-urlencoded; charset=koi8-r",
  "multipart/form-data; boundary=XyZ",
  "multipart/form-data",
  "multipart/form-data; boundary=",
  "application/json",
  "application/scim+json",
  "text/plain",
  "text/xml",
  "application/samlassertion+xml",
  "application/octet-stream",
  "*/*",
  ";;;",
];

type Session = { cookie: string; csrf: string };

function cookieOf(res: Response | RawResponse): string {
  const raw =
    res instanceof Response ? res.headers.getSetCookie() : ([] as string[]).concat(res.headers["set-cookie"] ?? []);
  return raw.map((c) => c.split(";")[0]).join("; ");
}

function multipart(rng: Rng, fields: Record<string, string>): string {
  const parts = Object.entries(fields).map(
    ([name, value]) => `--XyZ\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  if (rng.chance(0.5))
    parts.push(
      `--XyZ\r\nContent-Disposition: form-data; name="draft"; filename="m.yaml"\r\nContent-Type: text/yaml\r\n\r\n${rng.chance(0.5) ? TEST_MAPPING : nastyString(rng)}\r\n`,
    );
  // Broken framing: part headers that are not headers, a part with no blank line, too many parts.
  if (rng.chance(0.25))
    for (let n = 1 + rng.int(3); n > 0; n--)
      parts.splice(
        rng.int(parts.length + 1),
        0,
        rng.pick(["--XyZ\r\nbad\r\n\r\nx\r\n", "--XyZ\r\n\r\n", "--XyZ\r\nContent-Disposition: form-data\r\nx"]),
      );
  if (rng.chance(0.1))
    for (let n = 0; n < 20 + rng.int(30); n++)
      parts.push(`--XyZ\r\nContent-Disposition: form-data; name="f${n}"\r\n\r\nv\r\n`);
  const body = parts.join("") + (rng.chance(0.8) ? "--XyZ--\r\n" : "");
  return rng.chance(0.2) ? body.slice(0, rng.int(body.length)) : body;
}

/** A body in the route's own content type: whole, truncated, or with broken framing. */
function bodyOfType(rng: Rng, type: string, fields: Record<string, string>): string {
  if (type.startsWith("multipart/")) return multipart(rng, fields);
  const whole = type === "application/json" ? JSON.stringify(fields) : new URLSearchParams(fields).toString();
  return rng.pick([
    () => whole,
    () => whole,
    () => whole.slice(0, rng.int(whole.length + 1)),
    () => `${whole}&%E0%A4%A&=&&=%`,
    () => `{"a":${"[".repeat(2000)}`,
  ])();
}

/** What node:http will put in a header (it refuses control characters and code points above 0xff). */
function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x7e\x80-\xff]/g, "?");
}

/** The routes that read a body, each in the content type it parses: they get one request in four. */
const BODY_ROUTES: { path: string; type: string }[] = [
  { path: "/admin/mapping/preview", type: "multipart/form-data; boundary=XyZ" },
  { path: "/admin/mapping/preview", type: "application/x-www-form-urlencoded" },
  { path: "/admin/login", type: "application/x-www-form-urlencoded" },
  { path: "/admin/logout", type: "application/x-www-form-urlencoded" },
  { path: "/admin/saml/acs", type: "application/x-www-form-urlencoded" },
  { path: "/admin/runs/resync", type: "application/x-www-form-urlencoded" },
  { path: "/admin/approvals/approve", type: "application/x-www-form-urlencoded" },
  { path: "/admin/api/resync", type: "application/json" },
  { path: "/admin/api/mirror/parked/requeue", type: "application/json" },
  { path: "/admin/api/approvals/all/approve", type: "application/json" },
];

function fuzzRequest(rng: Rng, session: Session | undefined, samlResponses: string[]): RawRequest {
  const bodyRoute = rng.chance(0.25) ? rng.pick(BODY_ROUTES) : undefined;
  const method = bodyRoute ? "POST" : rng.pick(METHODS);
  const target = bodyRoute?.path ?? rng.pick(PATHS);
  // The SAML routes get well-formed forms more often: the interesting bodies are signed responses.
  const samlForm = target.includes("/saml/") && rng.chance(0.5);
  const type = bodyRoute?.type ?? (samlForm ? "application/x-www-form-urlencoded" : rng.pick(CONTENT_TYPES));
  const headers: Record<string, string> = {};
  if (type) headers["Content-Type"] = type;
  if (session && rng.chance(0.7)) headers.Cookie = session.cookie;
  if (target.startsWith("/admin/api") && rng.chance(0.6))
    headers.Authorization = `Bearer ${rng.chance(0.8) ? ADMIN_TOKEN : headerSafe(nastyString(rng))}`;
  if (rng.chance(0.1)) headers["X-Forwarded-For"] = "203.0.113.9";
  const fields: Record<string, string> = {};
  if (session && rng.chance(0.6)) fields._csrf = rng.chance(0.9) ? session.csrf : nastyString(rng);
  if ((samlForm || rng.chance(0.4)) && samlResponses.length) fields.SAMLResponse = rng.pick(samlResponses);
  else if (rng.chance(0.2))
    fields.SAMLResponse = rng.chance(0.5) ? Buffer.from(nastyString(rng)).toString("base64") : nastyString(rng);
  if (rng.chance(0.2)) fields.SAMLRequest = nastyString(rng);
  if (rng.chance(0.3)) fields.token = rng.chance(0.3) ? ADMIN_TOKEN : nastyString(rng);
  if (rng.chance(0.3))
    fields[rng.pick(["id", "all", "draft", "family", "verify", "dryRun"])] = rng.chance(0.5) ? "1" : nastyString(rng);
  const form = new URLSearchParams(fields).toString();
  const body = bodyRoute
    ? bodyOfType(rng, bodyRoute.type, fields)
    : samlForm
      ? form
      : rng.pick<() => string | Buffer | undefined>([
          () => undefined,
          () => form,
          () => form,
          () => multipart(rng, fields),
          () => JSON.stringify(fields),
          () => `<samlp:Response>${nastyString(rng)}</samlp:Response>`,
          () => Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, ...Buffer.from(form)]),
          () => `${form}&${"a=1&".repeat(6000)}`,
          () => "x".repeat(rng.chance(0.5) ? 20_000 : 2_200_000),
        ])();
  // One body in five arrives after its head, in a few pieces: its parser runs from later socket reads.
  const late = body !== undefined && Buffer.byteLength(body) < 100_000 && rng.chance(bodyRoute ? 0.5 : 0.2);
  return {
    method,
    path: target,
    headers,
    body: method === "HEAD" && rng.chance(0.5) ? undefined : body,
    chunked: rng.chance(0.1),
    pieces: late ? { count: 1 + rng.int(4), lateMs: 5 + rng.int(40) } : undefined,
  };
}

for (const mode of ["saml", "local"] as const) {
  describe(`admin and SAML routes fuzz, ${mode} mode (seed ${SEED})`, () => {
    let database: TestDatabase;
    let connector: ConnectorProcess | undefined;
    const idp = makeIdpKeys("fuzz-idp");

    beforeAll(async () => {
      database = await createTestDatabase();
      const mappingFile = await writeMappingFile();
      const saml: Record<string, string> =
        mode === "saml"
          ? {
              SAML_ENTRY_POINT: "https://idp.example.test/sso",
              SAML_ISSUER: SP_ENTITY,
              SAML_IDP_CERT: idp.cert,
              SAML_CALLBACK_URL: ACS,
            }
          : {};
      connector = await spawnConnector({
        DATABASE_URL: database.url,
        SCIM_TOKEN: IDP_TOKEN,
        ADMIN_TOKEN,
        MAPPING_FILE: mappingFile,
        RECONCILE_WORKERS: "0",
        RESYNC_CRON: "off",
        ...saml,
      });
    }, 90_000);
    afterAll(async () => {
      await connector?.kill("SIGKILL");
      await database?.drop();
    });

    /** A real login's request id, answered by a validly signed response (with the cookies of the browser that asked). */
    async function signedLogin(url: string, nameId: string): Promise<{ response: string; cookie: string }> {
      const started = await fetch(`${url}/admin/saml/login`, { redirect: "manual" });
      const inResponseTo = authnRequestIdFromRedirect(started.headers.get("location")!);
      return {
        response: encodeResponse(
          signedResponse({ inResponseTo, acsUrl: ACS, audience: SP_ENTITY, nameId, role: "admin" }, idp),
        ),
        cookie: cookieOf(started),
      };
    }

    async function signIn(url: string): Promise<Session> {
      let cookie: string;
      if (mode === "saml") {
        const login = await signedLogin(url, "fuzzer@example.com");
        const acs = await fetch(`${url}/admin/saml/acs`, {
          method: "POST",
          redirect: "manual",
          headers: { Cookie: login.cookie, "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ SAMLResponse: login.response }),
        });
        expect(acs.status).toBe(303);
        cookie = cookieOf(acs);
      } else {
        const page = await fetch(`${url}/admin/login`);
        const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
        const login = await fetch(`${url}/admin/login`, {
          method: "POST",
          redirect: "manual",
          headers: { Cookie: cookieOf(page), "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ _csrf: csrf, token: ADMIN_TOKEN }),
        });
        expect(login.status).toBe(303);
        cookie = cookieOf(login);
      }
      const home = await fetch(`${url}/admin`, { headers: { Cookie: cookie } });
      expect(home.status).toBe(200);
      return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(await home.text())![1]! };
    }

    it(
      `answers ${REQUESTS} generated requests: never 5xx, never a stack, the process never exits`,
      { timeout: 300_000 },
      async () => {
        const c = connector!;
        console.log(`admin fuzz (${mode}) seed ${SEED} (replay: FUZZ_SEED=${SEED}), ${REQUESTS} requests`);
        const session = await signIn(c.url);
        const samlResponses =
          mode === "saml"
            ? await Promise.all(
                Array.from({ length: 12 }, (_, n) =>
                  signedLogin(c.url, `user${n}@example.com`).then((l) => l.response),
                ),
              )
            : [];
        const client = rawClient(c.url, CONCURRENCY);
        const statuses = new Map<number, number>();
        const failures: string[] = [];
        const routes = new Set<string>();
        let answered = 0;
        let resetWhileSending = 0;
        let inPieces = 0;
        await runPool(REQUESTS, CONCURRENCY, async (i) => {
          const rng = prng(SEED + i * 7919 + (mode === "saml" ? 0 : 1));
          const request = fuzzRequest(rng, rng.chance(0.6) ? session : undefined, samlResponses);
          const label = `#${i} ${request.method} ${request.path} ${JSON.stringify(request.headers)}${request.pieces ? ` in ${request.pieces.count} pieces ${request.pieces.lateMs} ms apart` : ""} ${String(request.body ?? "").slice(0, 120)}`;
          if (request.pieces) inPieces++;
          let res: RawResponse;
          try {
            res = await client.send(request);
            answered++;
          } catch (error) {
            // Every request gets an answer: a connection dropped instead is a failure, process up or not.
            // Only a reset while the body was still going out is let through (and counted): a server
            // that answers early and closes can have its answer discarded by the client's kernel.
            const exited = c.child.exitCode !== null || c.child.signalCode !== null;
            const { code, whileSending, message } = error as TransportError & { code?: string };
            if (!exited && whileSending && (code === "ECONNRESET" || code === "EPIPE")) resetWhileSending++;
            else failures.push(`${label} → ${exited ? "process exited" : "no answer"}: ${message}`);
            return;
          }
          routes.add(`${request.method} ${request.path}`);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const text = res.body.toString("utf8");
          if (res.status >= 500) failures.push(`${label} → ${res.status} ${text.slice(0, 300)}`);
          if (STACK_LINE.test(text))
            failures.push(`${label} → a stack or internal error in the answer: ${text.slice(0, 300)}`);
        });
        client.close();
        console.log(
          `admin fuzz (${mode}) seed ${SEED}: ${answered} of ${REQUESTS} requests answered (${resetWhileSending} reset while their body was still being sent) on ${routes.size} method and path pairs, ${inPieces} bodies late and in pieces; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}, failures ${failures.length}`,
        );

        expect(failures.slice(0, 20)).toEqual([]);
        expect(answered + resetWhileSending).toBe(REQUESTS);
        expect(resetWhileSending).toBeLessThan(REQUESTS / 100);
        const scim = await fetch(`${c.url}/scim/v2/Users?count=1`, {
          headers: { Authorization: `Bearer ${IDP_TOKEN}` },
        });
        expect(scim.status, c.output().slice(-2000)).toBe(200);
        expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
        expect(c.child.exitCode).toBeNull();
        expect(c.child.signalCode).toBeNull();
      },
    );
  });
}

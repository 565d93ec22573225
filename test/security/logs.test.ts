import request from "supertest";
import Transport from "winston-transport";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetLogger, scrub, setLogLevel, setLogTransport } from "../../src/logging/logger.js";
import { csrfFrom, startAdminHarness, type AdminHarness } from "../support/adminHarness.js";
import {
  authnRequestIdFromRedirect,
  encodeResponse,
  makeIdpKeys,
  samlLoginCookie,
  signedResponse,
  type IdpKeys,
} from "../support/saml.js";
import { addFault, emulatorCounts } from "../support/emulator.js";
import { ADMIN_TOKEN, IDP_TOKEN, startStack, type Stack } from "../support/stack.js";
import { eventually } from "../support/wait.js";
import { METRICS_TOKEN, ACS, SP_ENTITY } from "../support/constants.js";

/**
 * Secrets never reach the logs. Every log line of a realistic session is captured (level debug,
 * the transport the service uses replaced by one that keeps the formatted text and the raw
 * record): IdP pushes, the reconciler and the mirror sync calling the platform (with faults),
 * admin API calls, a local UI sign-in, a SAML sign-in, failed attempts of each. Then the text is
 * searched for every secret the session used and for every full email address.
 */

const PLATFORM_SCIM_TOKEN = "dev-scim-token";
const PLATFORM_API_KEY = "dev-api-key";
const OKTA_PASSWORD = "Okta-Pa55word-Secret!";
const WRONG_ADMIN_PASSWORD = "wrong-admin-password-guess-1234";
const WRONG_IDP_TOKEN = "wrong-idp-token-guess-abcdef123456";
const SAML_USER = "ada.lovelace@corp.example.com";

class CaptureTransport extends Transport {
  readonly lines: string[] = [];
  override log(info: Record<string | symbol, unknown>, callback: () => void): void {
    // The formatted line (what an operator sees) and the whole record, in case a format drops fields.
    this.lines.push(String(info[Symbol.for("message")] ?? ""), JSON.stringify(info));
    callback();
  }
}

describe("secrets and emails never reach the logs", () => {
  const capture = new CaptureTransport();
  const secrets = new Map<string, string>(); // what → value
  const emails = new Set<string>();
  let stack: Stack;
  let saml: AdminHarness;
  let idpKeys: IdpKeys;
  let marketingId = "";

  const remember = (what: string, value: string | undefined) => {
    if (value) secrets.set(what, value);
  };

  beforeAll(async () => {
    setLogTransport(capture);
    setLogLevel("debug");
    stack = await startStack({ workers: false, env: { METRICS_TOKEN } });
    idpKeys = makeIdpKeys("log-test-idp");
    saml = await startAdminHarness({
      SAML_ENTRY_POINT: "https://idp.example.test/sso",
      SAML_ISSUER: SP_ENTITY,
      SAML_IDP_CERT: idpKeys.cert,
      SAML_CALLBACK_URL: ACS,
      SAML_ROLE_ATTRIBUTE: "groups",
      SAML_ADMIN_VALUES: "scim-admins",
    });
    for (const [what, value] of [
      ["IdP token", IDP_TOKEN],
      ["admin token", ADMIN_TOKEN],
      ["metrics token", METRICS_TOKEN],
      ["platform SCIM token", PLATFORM_SCIM_TOKEN],
      ["platform API key", PLATFORM_API_KEY],
      ["an Okta password", OKTA_PASSWORD],
      ["a wrong admin token tried", WRONG_ADMIN_PASSWORD],
      ["a wrong IdP token tried", WRONG_IDP_TOKEN],
    ])
      remember(what!, value);
  }, 120_000);

  afterAll(async () => {
    resetLogger();
    await stack?.close();
    await saml?.database.drop();
  });

  it("an IdP pushes users and groups, with mistakes and wrong tokens", async () => {
    const scim = (method: "get" | "post" | "patch", path: string, body?: unknown, token = IDP_TOKEN) => {
      const req = request(stack.service.url)[method](`/scim/v2${path}`).set("Authorization", `Bearer ${token}`);
      return body === undefined ? req : req.set("Content-Type", "application/scim+json").send(JSON.stringify(body));
    };
    const ids: string[] = [];
    for (const name of ["ann.example", "bob.example", "cy.example"]) {
      const userName = `${name}@customer.example.com`;
      emails.add(userName);
      const res = await scim("post", "/Users", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName,
        name: { givenName: name, familyName: "Test" },
        emails: [{ value: userName, type: "work", primary: true }],
        password: OKTA_PASSWORD,
        active: true,
      });
      expect(res.status, res.text).toBe(201);
      ids.push(res.body.id);
    }
    const group = await scim("post", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "Marketing",
      members: ids.map((value) => ({ value })),
    });
    expect(group.status).toBe(201);
    marketingId = group.body.id as string;
    // Entra's dialect, a password change, and mistakes that echo values back in their errors.
    await scim("patch", `/Users/${ids[0]}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "Replace", path: "password", value: OKTA_PASSWORD }],
    });
    await scim("patch", `/Users/${ids[1]}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "Replace", path: "active", value: "False" }],
    });
    const bad = await scim("patch", `/Users/${ids[2]}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "Replace", path: `emails[value eq "${[...emails][2]}"`, value: OKTA_PASSWORD }],
    });
    expect(bad.status).toBe(400);
    // A password where a boolean goes, and filters that name one: the error details must not carry it to the logs.
    await scim("patch", `/Users/${ids[2]}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "Replace", path: "active", value: OKTA_PASSWORD }],
    });
    for (const operation of [
      { op: "add", path: "emails", value: OKTA_PASSWORD },
      { op: "replace", path: "name.givenName", value: { x: OKTA_PASSWORD } },
      { op: "replace", value: OKTA_PASSWORD },
      { op: "replace", path: "userName", value: [OKTA_PASSWORD] },
      { op: "remove", path: `emails[value eq "${OKTA_PASSWORD}"]`, value: OKTA_PASSWORD },
    ]) {
      await scim("patch", `/Users/${ids[2]}`, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [operation],
      });
    }
    await scim("get", `/Users?filter=${encodeURIComponent(`password eq "${OKTA_PASSWORD}"`)}`);
    await scim("get", `/Users?filter=${encodeURIComponent(`${OKTA_PASSWORD} eq "x"`)}`);
    await scim("get", `/Users?attributes=${encodeURIComponent(OKTA_PASSWORD)}`);
    expect((await scim("post", "/Users", { userName: [...emails][0], password: OKTA_PASSWORD })).status).toBe(409);
    expect((await scim("post", "/Users", { userName: 42, password: OKTA_PASSWORD })).status).toBe(400);
    expect((await scim("get", `/Users?filter=${encodeURIComponent(`userName eq "${[...emails][0]}"`)}`)).status).toBe(
      200,
    );
    expect((await scim("get", `/Users?filter=${encodeURIComponent(`userName zz "${[...emails][1]}"`)}`)).status).toBe(
      400,
    );
    expect((await scim("get", "/Users", undefined, WRONG_IDP_TOKEN)).status).toBe(401);
    expect((await scim("post", "/Users", { userName: "x@customer.example.com" }, ADMIN_TOKEN)).status).toBe(401);
  });

  it("the reconciler and the mirror sync call the platform, through faults", async () => {
    const worker = stack.service.reconciliation!.worker;
    const drain = async () => {
      for (let i = 0; i < 30 && (await worker.runOnce()); i++) {
        /* what is ready */
      }
    };
    await drain(); // accounts created: POSTs with the platform SCIM token
    // A create that meets a 503, then one whose connection drops (the users below have no account yet).
    await addFault(stack.emulator.url, { method: "POST", path: "/scim/v2/Users", status: 503, count: 1 });
    await addFault(stack.emulator.url, { method: "POST", path: "/scim/v2/Users", dropConnection: true, count: 1 });
    for (const name of ["dee.example", "eve.example"]) {
      const userName = `${name}@customer.example.com`;
      emails.add(userName);
      const res = await request(stack.service.url)
        .post("/scim/v2/Users")
        .set("Authorization", `Bearer ${IDP_TOKEN}`)
        .set("Content-Type", "application/scim+json")
        .send(
          JSON.stringify({
            schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
            userName,
            name: { givenName: name, familyName: "T" },
            active: true,
          }),
        );
      expect(res.status).toBe(201);
      const added = await request(stack.service.url)
        .patch(`/scim/v2/Groups/${marketingId}`)
        .set("Authorization", `Bearer ${IDP_TOKEN}`)
        .set("Content-Type", "application/scim+json")
        .send(
          JSON.stringify({
            schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
            Operations: [{ op: "add", path: "members", value: [{ value: res.body.id }] }],
          }),
        );
      expect(added.status).toBeLessThan(300);
    }
    await drain();
    for (const email of ["m1.sub@customer.example.com", "m2.sub@customer.example.com"]) emails.add(email);
    await stack.database.db.query(
      `INSERT INTO mirror.email_subscription_states (email, subscription_state) VALUES ('m1.sub@customer.example.com', 'subscribed'), ('m2.sub@customer.example.com', 'unsubscribed')`,
    );
    await addFault(stack.emulator.url, { path: "/email", status: 500, count: 1 });
    // Past the mirror's linger for more changes (500 ms): the newest pending change is older than that.
    await eventually(
      "the pending changes to be older than the linger",
      async () => {
        const [row] = (await stack.database.db.query(
          `SELECT coalesce(max(changed_at) < now() - interval '500 milliseconds', true) AS old FROM mirror_sync.pending`,
        )) as { old: boolean }[];
        return row!.old;
      },
      { intervalMs: 50 },
    );
    await stack.service.mirror!.drain(50);
    const stats = await emulatorCounts(stack.emulator.url);
    expect(Object.keys(stats.requests).some((k) => k.startsWith("POST /scim/v2/Users"))).toBe(true);
    console.log(`logs: platform requests during the session ${JSON.stringify(stats.requests)}`);
    // The mirror sync used the API key on the REST API.
    expect(
      Object.keys(stats.requests).filter((k) => !k.includes("/scim/")),
      JSON.stringify(stats.requests),
    ).not.toEqual([]);
  });

  it("an admin uses the JSON API, the UI with the local token, and SAML", async () => {
    const api = (path: string, token = ADMIN_TOKEN) =>
      request(stack.service.url).get(`/admin/api${path}`).set("Authorization", `Bearer ${token}`);
    expect((await api(`/log?user=${encodeURIComponent([...emails][0]!)}`)).status).toBe(200);
    expect((await api("/budget")).status).toBe(200);
    expect((await api("/queue", WRONG_ADMIN_PASSWORD)).status).toBe(401);
    expect((await api("/log?since=not-a-date")).status).toBe(400);
    expect(
      (await request(stack.service.url).get("/metrics").set("Authorization", `Bearer ${METRICS_TOKEN}`)).status,
    ).toBe(200);

    // Local sign-in: a failed attempt, then the right token; pages; sign out.
    const agent = request.agent(stack.service.url);
    const loginPage = await agent.get("/admin/login");
    const csrf = csrfFrom(loginPage.text);
    remember("a CSRF token", csrf);
    expect(
      (await agent.post("/admin/login").type("form").send({ _csrf: csrf, token: WRONG_ADMIN_PASSWORD })).status,
    ).toBe(401);
    const signedIn = await agent.post("/admin/login").type("form").send({ _csrf: csrf, token: ADMIN_TOKEN });
    expect(signedIn.status).toBe(303);
    const cookie = [signedIn.headers["set-cookie"]]
      .flat()
      .map(String)
      .find((c) => c.startsWith("scim_admin_sid="))!;
    const signed = decodeURIComponent(cookie.split(";")[0]!.slice("scim_admin_sid=".length));
    remember("the session cookie", signed);
    remember("the session id", signed.replace(/^s:/, "").split(".")[0]);
    for (const page of [
      "/admin",
      "/admin/log",
      "/admin/users",
      `/admin/users?q=${encodeURIComponent([...emails][0]!)}`,
      "/admin/approvals",
      "/admin/mirror",
    ]) {
      expect((await agent.get(page)).status, page).toBeLessThan(500);
    }
    const logout = await agent
      .post("/admin/logout")
      .type("form")
      .send({ _csrf: csrfFrom((await agent.get("/admin")).text) });
    expect(logout.status).toBe(303);

    // SAML: a good login, a replay of it, and one signed by someone else.
    emails.add(SAML_USER);
    const samlAgent = request.agent(saml.app);
    let loginCookie = "";
    const login = async () => {
      const res = await samlAgent.get("/admin/saml/login");
      loginCookie = samlLoginCookie(res); // Secure: supertest's jar keeps it off plain http
      return authnRequestIdFromRedirect(res.headers.location!);
    };
    const options = (inResponseTo: string) => ({
      inResponseTo,
      acsUrl: ACS,
      audience: SP_ENTITY,
      nameId: SAML_USER,
      role: "scim-admins",
      roleAttribute: "groups",
    });
    const xml = signedResponse(options(await login()), idpKeys);
    const encoded = encodeResponse(xml);
    remember("the SAML response (base64)", encoded);
    remember("the SAML response (XML)", xml);
    remember("the signature value", /<(?:ds:)?SignatureValue>([^<]+)</.exec(xml)?.[1]?.replace(/\s/g, ""));
    remember("the assertion element", "<saml:Assertion");
    remember("the response element", "<samlp:Response");
    const acs = await samlAgent
      .post("/admin/saml/acs")
      .set({ Cookie: loginCookie })
      .type("form")
      .send({ SAMLResponse: encoded });
    expect(acs.status).toBe(303);
    expect((await samlAgent.get("/admin")).status).toBe(200);
    const samlCookie = [acs.headers["set-cookie"]]
      .flat()
      .map(String)
      .find((c) => c.startsWith("scim_admin_sid="));
    remember(
      "the SAML session cookie",
      samlCookie && decodeURIComponent(samlCookie.split(";")[0]!.slice("scim_admin_sid=".length)),
    );
    expect(
      (
        await samlAgent
          .post("/admin/saml/acs")
          .set({ Cookie: loginCookie })
          .type("form")
          .send({ SAMLResponse: encoded })
      ).status,
    ).toBe(401);
    const forged = signedResponse(options(await login()), makeIdpKeys("attacker"));
    remember("a forged SAML response", encodeResponse(forged));
    expect(
      (
        await samlAgent
          .post("/admin/saml/acs")
          .set({ Cookie: loginCookie })
          .type("form")
          .send({ SAMLResponse: encodeResponse(forged) })
      ).status,
    ).toBe(401);
    const tampered = Buffer.from(xml.replace(SAML_USER, "mallory@corp.example.com")).toString("base64");
    remember("a tampered SAML response", tampered);
    emails.add("mallory@corp.example.com");
    expect(
      (
        await samlAgent
          .post("/admin/saml/acs")
          .set({ Cookie: loginCookie })
          .type("form")
          .send({ SAMLResponse: tampered })
      ).status,
    ).toBe(401);
  });

  it("the central scrubber cuts emails in any string field, nested or in an error, and redacts secret-named fields", () => {
    const scrubbed = JSON.stringify(
      scrub({
        detail: `Invalid PATCH path 'emails[value eq "ann.lee@customer.example.com"]'`,
        nested: { list: ["bo@x.example.org"] },
        error: new Error("no user Cy.Dee+tag@corp.example.co.uk"),
        apiKey: "k",
        Authorization: "Bearer t",
      }),
    );
    expect(scrubbed).not.toMatch(/ann\.lee|bo@|Cy\.Dee/);
    expect(scrubbed).toContain("a…@customer.example.com");
    expect(scrubbed).toContain('"apiKey":"[redacted]"');
    expect(scrubbed).toContain('"Authorization":"[redacted]"');
  });

  it("the captured logs hold none of the secrets and no full email address", () => {
    const text = capture.lines.join("\n");
    // The capture saw the session: sign-ins, IdP writes, refusals.
    expect(text).toContain("signed in");
    expect(text).toContain("user created");
    expect(text).toContain("saml sign-in rejected");
    expect(text).toContain("local sign-in refused");
    expect(capture.lines.length).toBeGreaterThan(50);

    const leaks: string[] = [];
    for (const [what, value] of secrets) {
      // Also long pieces: a truncated secret is still a leak.
      const pieces =
        value.length > 60
          ? [
              value,
              value.slice(0, 40),
              value.slice(-40),
              value.slice(Math.floor(value.length / 2), Math.floor(value.length / 2) + 40),
            ]
          : [value];
      for (const piece of pieces) if (text.includes(piece)) leaks.push(`${what}: ${piece.slice(0, 60)}`);
    }
    for (const email of emails) if (text.toLowerCase().includes(email.toLowerCase())) leaks.push(`email ${email}`);
    const anyEmail = text.match(/[\w.+-]{2,}@[\w-]+\.[\w.-]+/g) ?? [];
    console.log(
      `logs: ${capture.lines.length / 2} records captured, ${secrets.size} secrets and ${emails.size} emails searched, ${leaks.length} leaks`,
    );
    if (leaks.length)
      console.log(
        capture.lines
          .filter(
            (l, i) =>
              i % 2 === 0 &&
              leaks.some((k) => l.toLowerCase().includes(k.split(" ").pop()!.slice(0, 30).toLowerCase())),
          )
          .join("\n"),
      );
    expect(leaks).toEqual([]);
    expect(anyEmail).toEqual([]);
  });
});

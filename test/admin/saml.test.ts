import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertionXml,
  authnRequestIdFromRedirect,
  encodeResponse,
  makeIdpKeys,
  responseXml,
  samlLoginCookie,
  signedResponse,
  signElement,
  type IdpKeys,
  type ResponseOptions,
} from "../support/saml.js";
import {
  commentInNameId,
  duplicateAssertionId,
  naiveValidate,
  signedAssertionUnderForged,
  wrappedInExtensions,
  wrappedInSignatureObject,
} from "./samlWrapping.js";
import { csrfFrom, startAdminHarness, type AdminHarness } from "../support/adminHarness.js";
import { ACS, SP_ENTITY } from "../support/constants.js";

describe("admin UI SAML sign-in", () => {
  let h: AdminHarness;
  let idp: IdpKeys;
  let attacker: IdpKeys;

  beforeAll(async () => {
    idp = makeIdpKeys("test-idp");
    attacker = makeIdpKeys("attacker");
    h = await startAdminHarness({
      SAML_ENTRY_POINT: "https://idp.example.test/sso",
      SAML_ISSUER: SP_ENTITY,
      SAML_IDP_CERT: idp.cert,
      SAML_CALLBACK_URL: ACS,
      SAML_ROLE_ATTRIBUTE: "groups",
      SAML_ADMIN_VALUES: "scim-admins, Connector Admins",
      SAML_VIEWER_VALUES: "scim-viewers",
      SAML_IDP_ISSUER: "https://idp.example.test",
      SAML_LOGIN_PER_ADDRESS_PER_MINUTE: "1000", // these tests start many sign-ins; the limit has its own test below
    });
  });
  afterAll(async () => {
    await h?.database.drop();
  });

  /**
   * The pre-login cookie each browser got from /admin/saml/login. It is Secure (SameSite=None, for
   * the IdP's cross-site POST), which supertest's jar will not send over http, so it is sent here.
   */
  const loginCookies = new WeakMap<request.Agent, string>();

  /** Starts an SP-initiated login and returns the AuthnRequest id the response must answer. */
  async function startLogin(agent: request.Agent): Promise<string> {
    const res = await agent.get("/admin/saml/login");
    expect(res.status).toBe(302);
    expect(res.headers.location).toMatch(/^https:\/\/idp\.example\.test\/sso\?SAMLRequest=/);
    loginCookies.set(agent, samlLoginCookie(res));
    return authnRequestIdFromRedirect(res.headers.location!);
  }

  const options = (inResponseTo: string, extra: Partial<ResponseOptions> = {}): ResponseOptions => ({
    inResponseTo,
    acsUrl: ACS,
    audience: SP_ENTITY,
    nameId: "ada@example.com",
    role: "scim-admins",
    roleAttribute: "groups",
    ...extra,
  });

  const post = (agent: request.Agent, xml: string, cookie = loginCookies.get(agent)) =>
    agent
      .post("/admin/saml/acs")
      .set(cookie ? { Cookie: cookie } : {})
      .type("form")
      .send({ SAMLResponse: encodeResponse(xml) });

  async function expectRejected(agent: request.Agent, res: request.Response, status = 401): Promise<void> {
    expect(res.status).toBe(status);
    expect(res.text).toContain(status === 401 ? "Sign-in rejected" : "No access");
    expect((await agent.get("/admin")).status).toBe(303);
  }

  it("publishes SP metadata naming the ACS and wanting signed assertions", async () => {
    const res = await request(h.app).get("/admin/saml/metadata");
    expect(res.status).toBe(200);
    expect(res.text).toContain(`entityID="${SP_ENTITY}"`);
    expect(res.text).toContain(`Location="${ACS}"`);
    expect(res.text).toContain('WantAssertionsSigned="true"');
  });

  it("the sign-in page offers single sign-on, not the token form", async () => {
    const res = await request(h.app).get("/admin/login");
    expect(res.text).toContain("/admin/saml/login");
    expect(res.text).not.toContain('name="token"');
    // No token sign-in route in SAML mode: the session check refuses the post.
    expect((await request(h.app).post("/admin/login").type("form").send({ token: "x" })).status).toBe(401);
  });

  it("a good, fully signed response signs an admin in", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    const res = await post(agent, signedResponse(options(id), idp));
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe("/admin");
    const page = await agent.get("/admin");
    expect(page.status).toBe(200);
    expect(page.text).toContain("ada@example.com");
    expect(page.text).toContain("badge-role-admin");
  });

  it("maps the viewer value to the viewer role, and a viewer cannot do an admin's action", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    expect(
      (
        await post(
          agent,
          signedResponse(options(id, { nameId: "vic@example.com", role: ["staff", "scim-viewers"] }), idp),
        )
      ).status,
    ).toBe(303);
    const page = await agent.get("/admin");
    expect(page.text).toContain("badge-role-viewer");
    const csrf = csrfFrom(page.text);
    for (const path of [
      "/admin/users/u-1/reconcile",
      "/admin/approvals/approve",
      "/admin/approvals/reject",
      "/admin/runs/resync",
    ]) {
      const res = await agent.post(path).type("form").send({ _csrf: csrf, all: "1", draft: "x" });
      expect([path, res.status]).toEqual([path, 403]);
      expect(res.text).toContain("Your role (viewer) cannot");
    }
    expect(h.calls).toEqual([]);
    // …while reading is fine.
    expect((await agent.get("/admin/approvals")).status).toBe(200);
  });

  it("refuses a user whose role attribute matches neither admin nor viewer", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    await expectRejected(agent, await post(agent, signedResponse(options(id, { role: "sales" }), idp)), 403);
    const id2 = await startLogin(agent);
    await expectRejected(agent, await post(agent, signedResponse(options(id2, { role: undefined }), idp)), 403);
  });

  it("rejects an unsigned response", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    const o = options(id);
    await expectRejected(agent, await post(agent, responseXml(o, assertionXml(o))));
  });

  it("rejects a response whose assertion is signed but the response is not, and vice versa", async () => {
    const agent = request.agent(h.app);
    const o = options(await startLogin(agent));
    await expectRejected(agent, await post(agent, responseXml(o, signElement(assertionXml(o), "Assertion", idp))));
    const o2 = options(await startLogin(agent));
    await expectRejected(agent, await post(agent, signElement(responseXml(o2, assertionXml(o2)), "Response", idp)));
  });

  it("rejects a response signed with another certificate", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    await expectRejected(agent, await post(agent, signedResponse(options(id), attacker)));
  });

  it("rejects an expired assertion", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    const now = Date.now();
    const expired = options(id, {
      notBefore: new Date(now - 20 * 60_000),
      notOnOrAfter: new Date(now - 5 * 60_000),
      issueInstant: new Date(now - 20 * 60_000),
    });
    await expectRejected(agent, await post(agent, signedResponse(expired, idp)));
  });

  it("rejects an assertion not yet valid", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    const now = Date.now();
    const future = options(id, {
      notBefore: new Date(now + 10 * 60_000),
      notOnOrAfter: new Date(now + 20 * 60_000),
      issueInstant: new Date(now),
    });
    await expectRejected(agent, await post(agent, signedResponse(future, idp)));
  });

  it("rejects a wrong audience", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    const res = await post(agent, signedResponse(options(id, { audience: "https://other-sp.example.test" }), idp));
    await expectRejected(agent, res);
    expect(res.text).toContain("audience");
  });

  it("rejects a response addressed to another service (Destination or Recipient)", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    await expectRejected(
      agent,
      await post(agent, signedResponse(options(id, { destination: "https://other-sp.example.test/acs" }), idp)),
    );
    const id2 = await startLogin(agent);
    await expectRejected(
      agent,
      await post(agent, signedResponse(options(id2, { recipient: "https://other-sp.example.test/acs" }), idp)),
    );
  });

  it("rejects a response to a request this service never sent (InResponseTo)", async () => {
    const agent = request.agent(h.app);
    await expectRejected(agent, await post(agent, signedResponse(options("_never-sent-0123456789"), idp)));
  });

  it("rejects a replayed response, even from another browser", async () => {
    const first = request.agent(h.app);
    const id = await startLogin(first);
    const xml = signedResponse(options(id), idp);
    expect((await post(first, xml)).status).toBe(303);
    const second = request.agent(h.app);
    await expectRejected(second, await post(second, xml));
    // Two copies at once: at most one may win.
    const id2 = await startLogin(first);
    const xml2 = signedResponse(options(id2), idp);
    const cookie = loginCookies.get(first);
    const results = await Promise.all([
      post(request.agent(h.app), xml2, cookie),
      post(request.agent(h.app), xml2, cookie),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([303, 401]);
  });

  const viewer = (id: string) => options(id, { nameId: "vic@example.com", role: "scim-viewers" });
  const mallory = (id: string) => options(id, { nameId: "mallory@example.com", role: "scim-admins" });
  it.each([
    [
      "the signed assertion moved under an unsigned, forged one",
      (id: string) => signedAssertionUnderForged(signedResponse(viewer(id), idp), mallory(id)),
    ],
    [
      "a forged assertion with the signed assertion's ID before it",
      (id: string) => duplicateAssertionId(signedResponse(viewer(id), idp), mallory(id)),
    ],
    [
      "the signed response wrapped in the Extensions of a forged one",
      (id: string) => wrappedInExtensions(signedResponse(viewer(id), idp), mallory(id)),
    ],
    [
      "the signed assertion in the ds:Object of its signature, moved into a forged assertion",
      (id: string) => wrappedInSignatureObject(signedResponse(viewer(id), idp), mallory(id)),
    ],
  ])("refuses signature wrapping: %s (a naive validator signs mallory in as admin)", async (_shape, build) => {
    const agent = request.agent(h.app);
    const xml = build(await startLogin(agent));
    expect(naiveValidate(xml, idp.cert)).toEqual({ nameId: "mallory@example.com", role: "scim-admins" });
    await expectRejected(agent, await post(agent, xml));
  });

  it("refuses a comment inside NameID (a naive validator reads only the text before it, another user)", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    // The attacker holds a genuine admin login for ada@example.com.attacker.test and cuts it after ada@example.com.
    const xml = commentInNameId(
      options(id, { nameId: "ada@example.com.attacker.test", role: "scim-admins" }),
      idp,
      "ada@example.com",
    );
    expect(naiveValidate(xml, idp.cert)).toEqual({ nameId: "ada@example.com", role: "scim-admins" });
    await expectRejected(agent, await post(agent, xml));
  });

  it.each([
    ["the Kelvin sign K (U+212A), which lower-cases to k", "\u212Aate@example.com"],
    ["a Cyrillic \u0430 among Latin letters", "k\u0430te@example.com"],
  ])("refuses a NameID that reads as another user's: %s (issue 34, finding 6)", async (_what, nameId) => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    await expectRejected(agent, await post(agent, signedResponse(options(id, { nameId }), idp)));
  });

  it("the previous wrapping variants: a forged assertion swapped into a signed response, or two assertions under an attacker's signature", async () => {
    const agent = request.agent(h.app);
    // Keep the genuinely signed response root but swap in the forged assertion: the response's own signature breaks.
    const id2 = await startLogin(agent);
    const genuine2 = signedResponse(options(id2, { nameId: "vic@example.com", role: "scim-viewers" }), idp);
    const forged2 = assertionXml(options(id2, { nameId: "mallory@example.com", role: "scim-admins" }));
    const swapped = genuine2.replace(/<saml:Assertion[\s\S]*<\/saml:Assertion>/, forged2);
    await expectRejected(agent, await post(agent, swapped));

    // The genuine signed assertion moved next to a forged one, the response signed by the attacker.
    const id3 = await startLogin(agent);
    const o3 = options(id3, { nameId: "vic@example.com", role: "scim-viewers" });
    const signedAssertion = signElement(assertionXml(o3), "Assertion", idp);
    const doubled = signElement(
      responseXml(o3, assertionXml(options(id3, { nameId: "mallory@example.com" })) + signedAssertion),
      "Response",
      attacker,
    );
    await expectRejected(agent, await post(agent, doubled));
  });

  it("GET /saml/login with a valid signed response in a form body only redirects: nobody is signed in and the service keeps serving", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    const xml = signedResponse(options(id), idp);
    const res = await agent
      .get("/admin/saml/login")
      .set({ Cookie: loginCookies.get(agent)! })
      .type("form")
      .send({ SAMLResponse: encodeResponse(xml) });
    expect(res.status).toBe(302);
    expect(res.headers.location).toMatch(/^https:\/\/idp\.example\.test\/sso\?SAMLRequest=/);
    expect((await agent.get("/admin")).status).toBe(303);
    // Still serving, and the response was not used up: posted to the ACS as meant, it signs in.
    expect((await request(h.app).get("/admin/saml/metadata")).status).toBe(200);
    expect((await post(agent, xml)).status).toBe(303);
    expect((await agent.get("/admin")).status).toBe(200);
  });

  it("refuses a response to a sign-in started in another browser (login CSRF)", async () => {
    const attacker = request.agent(h.app);
    const id = await startLogin(attacker);
    const xml = signedResponse(options(id, { nameId: "mallory@example.com" }), idp);
    const victim = request.agent(h.app);
    await startLogin(victim); // the victim's own, unrelated sign-in does not help either
    const res = await post(victim, xml);
    await expectRejected(victim, res);
    expect(res.text).toContain("not started in this browser");
    const id2 = await startLogin(attacker);
    await expectRejected(
      victim,
      await post(victim, signedResponse(options(id2, { nameId: "mallory@example.com" }), idp), ""),
    ); // no cookie at all
  });

  it("the pre-login cookie is HttpOnly, Secure and SameSite=None (the IdP posts cross-site), scoped to the SAML routes", async () => {
    const res = await request(h.app).get("/admin/saml/login");
    const cookie = ([] as string[])
      .concat(res.headers["set-cookie"] ?? [])
      .find((c) => c.startsWith("scim_admin_saml="))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/SameSite=None/);
    expect(cookie).toMatch(/Path=\/admin\/saml/);
  });

  it("refuses RSA-SHA1 signatures and SHA-1 digests, even from the right key", async () => {
    const agent = request.agent(h.app);
    const res = await post(agent, signedResponse(options(await startLogin(agent)), idp, "sha1"));
    await expectRejected(agent, res);
    expect(res.text).toContain("only RSA-SHA256");
    // RSA-SHA256 signatures over SHA-1 digests: the digest is the weak link, refused too.
    const o = options(await startLogin(agent));
    const sha1Digests = signElement(
      responseXml(o, signElement(assertionXml(o), "Assertion", idp, "sha256", "sha1")),
      "Response",
      idp,
      "sha256",
      "sha1",
    );
    await expectRejected(agent, await post(agent, sha1Digests));
  });

  it("refuses a response from another issuer (SAML_IDP_ISSUER), even signed with the configured key", async () => {
    const agent = request.agent(h.app);
    const res = await post(
      agent,
      signedResponse(options(await startLogin(agent), { idpEntityId: "https://other-idp.example.test" }), idp),
    );
    await expectRejected(agent, res);
    expect(res.text).toContain("SAML_IDP_ISSUER");
  });

  it("a rejected or malformed post is a page, never a 500", async () => {
    const agent = request.agent(h.app);
    for (const body of [
      {},
      { SAMLResponse: "not base64 !!" },
      { SAMLResponse: encodeResponse("<nope/>") },
      { SAMLResponse: encodeResponse("<<<") },
    ]) {
      const res = await agent.post("/admin/saml/acs").type("form").send(body);
      expect(res.status).toBe(401);
    }
  });
});

describe("unauthenticated SAML sign-in starts are bounded", () => {
  let h: AdminHarness;
  beforeAll(async () => {
    h = await startAdminHarness({
      SAML_ENTRY_POINT: "https://idp.example.test/sso",
      SAML_ISSUER: SP_ENTITY,
      SAML_IDP_CERT: makeIdpKeys().cert,
      SAML_CALLBACK_URL: ACS,
      SAML_LOGIN_PER_ADDRESS_PER_MINUTE: "3",
    });
  });
  afterAll(async () => {
    await h?.database.drop();
  });
  const storedRequests = async () =>
    Number((await h.database.db.query(`SELECT count(*) AS n FROM saml_authn_requests`))[0].n);

  it("GET /saml/login stores at most the allowance per address; past it the start still redirects, with a signed id and nothing stored", async () => {
    const from = (ip: string) => request(h.app).get("/admin/saml/login").set("X-Forwarded-For", ip);
    for (let i = 0; i < 3; i++) expect((await from("203.0.113.7")).status).toBe(302);
    const past = await from("203.0.113.7");
    expect(past.status).toBe(302);
    expect(authnRequestIdFromRedirect(past.headers.location!)).toMatch(/^_s[0-9a-z]+-[0-9a-f]{32}-[0-9a-f]{64}$/);
    expect(await storedRequests()).toBe(3);
    expect((await from("203.0.113.8")).status).toBe(302);
    expect(await storedRequests()).toBe(4);
  });
});

describe("SAML request ids are kept only as long as they are valid", () => {
  it("a signed request id is valid without a row until its TTL, and not once a byte of it changes", async () => {
    const { ManualClock } = await import("../../src/clock.js");
    const { PgSamlRequestCache } = await import("../../src/http/admin/auth/samlRequestCache.js");
    const { signedRequestId } = await import("../../src/http/admin/auth/samlSignedRequestId.js");
    const clock = new ManualClock();
    const noRows = { findAuthnRequest: async () => undefined } as never;
    const cache = new PgSamlRequestCache(noRows, clock, 10 * 60_000, async () => "the-cookie-secret");
    const issued = clock.now();
    const id = signedRequestId("the-cookie-secret", issued);
    expect(await cache.getAsync(id)).toBe(issued.toISOString());
    const flipped = `${id.slice(0, -1)}${id.endsWith("0") ? "1" : "0"}`;
    expect(await cache.getAsync(flipped)).toBeNull();
    expect(await cache.getAsync(signedRequestId("another-secret", clock.now()))).toBeNull();
    clock.advance(10 * 60_000 + 1);
    expect(await cache.getAsync(id)).toBeNull();
  });

  it("a request id older than the 10-minute TTL is deleted by the next sign-in start", async () => {
    const { createTestDatabase } = await import("../support/db.js");
    const { ManualClock } = await import("../../src/clock.js");
    const { AdminSessionRepository } = await import("../../src/db/auth/adminSessionRepository.js");
    const { PgSamlRequestCache } = await import("../../src/http/admin/auth/samlRequestCache.js");
    const database = await createTestDatabase();
    try {
      const clock = new ManualClock();
      const cache = new PgSamlRequestCache(new AdminSessionRepository(database.db), clock, 10 * 60_000);
      const ids = async () =>
        ((await database.db.query(`SELECT id FROM saml_authn_requests ORDER BY id`)) as { id: string }[]).map(
          (r) => r.id,
        );
      await cache.saveAsync("_a", "");
      clock.advance(9 * 60_000);
      await cache.saveAsync("_b", "");
      expect(await ids()).toEqual(["_a", "_b"]);
      clock.advance(60_001); // _a is now past its TTL, _b is not
      await cache.saveAsync("_c", "");
      expect(await ids()).toEqual(["_b", "_c"]);
      expect(await cache.getAsync("_a")).toBeNull();
    } finally {
      await database.drop();
    }
  });
});

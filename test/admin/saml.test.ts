import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertionXml,
  authnRequestIdFromRedirect,
  encodeResponse,
  makeIdpKeys,
  responseXml,
  signedResponse,
  signElement,
  type IdpKeys,
  type ResponseOptions,
} from "../support/saml.js";
import { csrfFrom, startAdminHarness, type AdminHarness } from "./harness.js";

const ACS = "https://scim.example.test/admin/saml/acs";
const SP_ENTITY = "https://scim.example.test/admin/saml/metadata";

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
    });
  });
  afterAll(async () => {
    await h?.database.drop();
  });

  /** Starts an SP-initiated login and returns the AuthnRequest id the response must answer. */
  async function startLogin(agent: request.Agent): Promise<string> {
    const res = await agent.get("/admin/saml/login");
    expect(res.status).toBe(302);
    expect(res.headers.location).toMatch(/^https:\/\/idp\.example\.test\/sso\?SAMLRequest=/);
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

  const post = (agent: request.Agent, xml: string) => agent.post("/admin/saml/acs").type("form").send({ SAMLResponse: encodeResponse(xml) });

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
    expect((await post(agent, signedResponse(options(id, { nameId: "vic@example.com", role: ["staff", "scim-viewers"] }), idp))).status).toBe(303);
    const page = await agent.get("/admin");
    expect(page.text).toContain("badge-role-viewer");
    const csrf = csrfFrom(page.text);
    for (const path of ["/admin/users/u-1/reconcile", "/admin/approvals/approve", "/admin/approvals/reject", "/admin/runs/resync", "/admin/mapping/apply"]) {
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
    const expired = options(id, { notBefore: new Date(now - 20 * 60_000), notOnOrAfter: new Date(now - 5 * 60_000), issueInstant: new Date(now - 20 * 60_000) });
    await expectRejected(agent, await post(agent, signedResponse(expired, idp)));
  });

  it("rejects an assertion not yet valid", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    const now = Date.now();
    const future = options(id, { notBefore: new Date(now + 10 * 60_000), notOnOrAfter: new Date(now + 20 * 60_000), issueInstant: new Date(now) });
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
    await expectRejected(agent, await post(agent, signedResponse(options(id, { destination: "https://other-sp.example.test/acs" }), idp)));
    const id2 = await startLogin(agent);
    await expectRejected(agent, await post(agent, signedResponse(options(id2, { recipient: "https://other-sp.example.test/acs" }), idp)));
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
    const results = await Promise.all([post(request.agent(h.app), xml2), post(request.agent(h.app), xml2)]);
    expect(results.map((r) => r.status).sort()).toEqual([303, 401]);
  });

  it("rejects a signature-wrapping attempt (a forged assertion around a genuinely signed response)", async () => {
    const agent = request.agent(h.app);
    const id = await startLogin(agent);
    // The attacker holds a genuine response for a viewer…
    const genuine = signedResponse(options(id, { nameId: "vic@example.com", role: "scim-viewers" }), idp);
    // …and wraps it: a new unsigned root with a forged admin assertion, the signed original tucked inside.
    const forged = options(id, { nameId: "mallory@example.com", role: "scim-admins" });
    const wrapped = responseXml(forged, assertionXml(forged)).replace(
      "<samlp:Status>",
      `<samlp:Extensions>${genuine.replace(/^<\?xml[^>]*>/, "")}</samlp:Extensions><samlp:Status>`,
    );
    await expectRejected(agent, await post(agent, wrapped));

    // Variant: keep the genuinely signed response root but swap in the forged assertion.
    const id2 = await startLogin(agent);
    const genuine2 = signedResponse(options(id2, { nameId: "vic@example.com", role: "scim-viewers" }), idp);
    const forged2 = assertionXml(options(id2, { nameId: "mallory@example.com", role: "scim-admins" }));
    const swapped = genuine2.replace(/<saml:Assertion[\s\S]*<\/saml:Assertion>/, forged2);
    await expectRejected(agent, await post(agent, swapped));

    // Variant: the genuine signed assertion moved next to a forged one (two assertions).
    const id3 = await startLogin(agent);
    const o3 = options(id3, { nameId: "vic@example.com", role: "scim-viewers" });
    const signedAssertion = signElement(assertionXml(o3), "Assertion", idp);
    const doubled = signElement(responseXml(o3, assertionXml(options(id3, { nameId: "mallory@example.com" })) + signedAssertion), "Response", attacker);
    await expectRejected(agent, await post(agent, doubled));
  });

  it("a rejected or malformed post is a page, never a 500", async () => {
    const agent = request.agent(h.app);
    for (const body of [{}, { SAMLResponse: "not base64 !!" }, { SAMLResponse: encodeResponse("<nope/>") }, { SAMLResponse: encodeResponse("<<<") }]) {
      const res = await agent.post("/admin/saml/acs").type("form").send(body);
      expect(res.status).toBe(401);
    }
  });
});

import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  authnRequestIdFromRedirect,
  encodeResponse,
  makeIdpKeys,
  samlLoginCookie,
  signedResponse,
  type IdpKeys,
  type ResponseOptions,
} from "../support/saml.js";
import { startAdminHarness, type AdminHarness } from "../support/adminHarness.js";
import { ACS, SP_ENTITY } from "../support/constants.js";

/**
 * The IdP side as docs/saml-okta.md and docs/saml-entra.md set it up: Entra's role claim accepted
 * with the default SAML_ROLE_ATTRIBUTE, and a certificate rollover (SAML_IDP_CERT_NEXT) during
 * which responses signed by the current or the next certificate are accepted, and no other.
 */

const ENTRA_ROLE_CLAIM = "http://schemas.microsoft.com/ws/2008/06/identity/claims/role";

describe("SAML as the IdP guides set it up", () => {
  let h: AdminHarness;
  let current: IdpKeys;
  let next: IdpKeys;
  let other: IdpKeys;

  beforeAll(async () => {
    current = makeIdpKeys("idp-current");
    next = makeIdpKeys("idp-next");
    other = makeIdpKeys("idp-other");
    // SAML_ROLE_ATTRIBUTE, SAML_ADMIN_VALUES and SAML_VIEWER_VALUES left at their defaults.
    h = await startAdminHarness({
      SAML_ENTRY_POINT: "https://idp.example.test/sso",
      SAML_ISSUER: SP_ENTITY,
      SAML_IDP_CERT: current.cert,
      SAML_IDP_CERT_NEXT: next.cert,
      SAML_CALLBACK_URL: ACS,
      SAML_IDP_ISSUER: "https://idp.example.test",
      SAML_LOGIN_PER_ADDRESS_PER_MINUTE: "1000",
    });
  });
  afterAll(async () => {
    await h?.database.drop();
  });

  /** A sign-in started at the connector and answered with `xml(id)`; resolves to the ACS's answer and the admin page. */
  async function signIn(response: (inResponseTo: string) => string) {
    const agent = request.agent(h.app);
    const login = await agent.get("/admin/saml/login");
    expect(login.status).toBe(302);
    const id = authnRequestIdFromRedirect(login.headers.location!);
    const acs = await agent
      .post("/admin/saml/acs")
      .set({ Cookie: samlLoginCookie(login) })
      .type("form")
      .send({ SAMLResponse: encodeResponse(response(id)) });
    return { acs, page: await agent.get("/admin") };
  }

  const options = (inResponseTo: string, extra: Partial<ResponseOptions> = {}): ResponseOptions => ({
    inResponseTo,
    acsUrl: ACS,
    audience: SP_ENTITY,
    idpEntityId: "https://idp.example.test",
    nameId: "ada@example.com",
    role: "admin",
    roleAttribute: "role",
    ...extra,
  });

  it("Entra's role claim signs an admin in with the default SAML_ROLE_ATTRIBUTE", async () => {
    const { acs, page } = await signIn((id) =>
      signedResponse(options(id, { roleAttribute: ENTRA_ROLE_CLAIM, role: "admin" }), current),
    );
    expect(acs.status).toBe(303);
    expect(page.text).toContain("badge-role-admin");
  });

  it("Okta's `role` attribute does too, and a viewer value gives the viewer role", async () => {
    const { page } = await signIn((id) => signedResponse(options(id, { role: "viewer" }), current));
    expect(page.status).toBe(200);
    expect(page.text).toContain("badge-role-viewer");
  });

  it("during a rollover, a response signed by the next certificate is accepted", async () => {
    const { acs, page } = await signIn((id) => signedResponse(options(id), next));
    expect(acs.status).toBe(303);
    expect(page.status).toBe(200);
    expect(page.text).toContain("ada@example.com");
  });

  it("one signed by any other certificate is still refused", async () => {
    const { acs, page } = await signIn((id) => signedResponse(options(id), other));
    expect(acs.status).toBe(401);
    expect(page.status).toBe(303);
  });
});

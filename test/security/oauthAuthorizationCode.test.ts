import { hash } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { OAuthClients } from "../../src/auth/oauth/clients.js";
import { loadEnv } from "../../src/config/env.js";
import { OAuthRepository } from "../../src/db/auth/oauthRepository.js";
import { startService, type Service } from "../../src/service.js";
import { csrfFrom } from "../support/adminHarness.js";
import { ACS, SP_ENTITY } from "../support/constants.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import {
  authnRequestIdFromRedirect,
  encodeResponse,
  makeIdpKeys,
  samlLoginCookie,
  signedResponse,
} from "../support/saml.js";

const REDIRECT = "https://okta.example.test/oauth/callback";

/**
 * Okta's OAuth mode, the authorization code grant: /oauth/authorize behind the admin UI's SAML
 * session (admin role), a CSRF-checked approval page, the code exchanged with PKCE when sent,
 * refresh tokens rotated, and a rotated refresh token used again revoking its whole family.
 */
describe("OAuth authorization code grant", () => {
  let database: TestDatabase;
  let service: Service;
  let secret: string;
  const idp = makeIdpKeys("oauth-idp");

  beforeAll(async () => {
    database = await createTestDatabase();
    service = await startService({
      env: loadEnv({
        PORT: "0",
        HOST: "127.0.0.1",
        RECONCILE_WORKERS: "0",
        RESYNC_CRON: "off",
        SAML_ENTRY_POINT: "https://idp.example.test/sso",
        SAML_ISSUER: SP_ENTITY,
        SAML_IDP_CERT: idp.cert,
        SAML_CALLBACK_URL: ACS,
        SAML_ROLE_ATTRIBUTE: "groups",
        SAML_ADMIN_VALUES: "scim-admins",
        SAML_VIEWER_VALUES: "scim-viewers",
        SAML_LOGIN_PER_ADDRESS_PER_MINUTE: "1000",
        AUTH_THROTTLE_PER_ADDRESS: "1000",
      }),
      databaseUrl: database.url,
    });
    secret = (
      await new OAuthClients(new OAuthRepository(database.db), { now: () => new Date() }).create("okta", 365, [
        REDIRECT,
      ])
    ).secret;
  });
  afterAll(async () => {
    await service?.close();
    await database?.drop();
  });

  /** Signs in over SAML; `cookie`: what the browser already holds (the page it was sent away from). */
  async function signIn(role: string, cookie?: string): Promise<request.Agent & { landedOn: string }> {
    const agent = request.agent(service.url);
    const started = await agent.get("/admin/saml/login");
    const id = authnRequestIdFromRedirect(started.headers.location!);
    const xml = signedResponse(
      {
        inResponseTo: id,
        acsUrl: ACS,
        audience: SP_ENTITY,
        nameId: `${role}@example.com`,
        role,
        roleAttribute: "groups",
      },
      idp,
    );
    const acs = await agent
      .post("/admin/saml/acs")
      .set({ Cookie: [samlLoginCookie(started), ...(cookie ? [cookie] : [])].join("; ") })
      .type("form")
      .send({ SAMLResponse: encodeResponse(xml) });
    expect(acs.status, acs.text.slice(0, 300)).toBe(303);
    return Object.assign(agent, { landedOn: acs.headers.location! });
  }

  const query = (extra: Record<string, string> = {}) =>
    new URLSearchParams({
      response_type: "code",
      client_id: "okta",
      redirect_uri: REDIRECT,
      state: "st-1",
      ...extra,
    }).toString();

  /** An admin approves on the page; the code from the redirect. */
  async function approve(agent: request.Agent, extra: Record<string, string> = {}): Promise<string> {
    const page = await agent.get(`/admin/oauth/authorize?${query(extra)}`);
    expect(page.status, page.text.slice(0, 300)).toBe(200);
    const fields = Object.fromEntries(new URLSearchParams(query(extra)));
    const res = await agent
      .post("/admin/oauth/authorize")
      .type("form")
      .send({ ...fields, _csrf: csrfFrom(page.text), decision: "approve" });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.location!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get("state")).toBe("st-1");
    return location.searchParams.get("code")!;
  }

  const token = (form: Record<string, string>, clientSecret = secret) =>
    request(service.url)
      .post("/oauth/token")
      .type("form")
      .send({ client_id: "okta", client_secret: clientSecret, ...form });
  const scim = (accessToken: string) =>
    request(service.url).get("/scim/v2/Users").set("Authorization", `Bearer ${accessToken}`);
  const refusedSoon = (accessToken: string) =>
    vi.waitFor(
      async () => {
        const res = await scim(accessToken);
        if (res.status !== 401) throw new Error(`still ${res.status}`);
      },
      { timeout: 15_000, interval: 250 },
    );

  it("needs a signed-in admin: /oauth/authorize leads to the sign-in, a viewer is refused, nothing is approved without CSRF", async () => {
    const entry = await request(service.url).get(`/oauth/authorize?${query()}`);
    expect(entry.status).toBe(303);
    expect(entry.headers.location).toBe(`/admin/oauth/authorize?${query()}`);
    const anonymous = await request(service.url).get(entry.headers.location!);
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.location).toBe("/admin/login");

    const viewer = await signIn("scim-viewers");
    const refused = await viewer.get(`/admin/oauth/authorize?${query()}`);
    expect(refused.status).toBe(403);

    const admin = await signIn("scim-admins");
    const page = await admin.get(`/admin/oauth/authorize?${query()}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(REDIRECT);
    const noCsrf = await admin
      .post("/admin/oauth/authorize")
      .type("form")
      .send({ ...Object.fromEntries(new URLSearchParams(query())), decision: "approve" });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.headers.location ?? "").not.toContain("code=");

    const denied = await admin
      .post("/admin/oauth/authorize")
      .type("form")
      .send({ ...Object.fromEntries(new URLSearchParams(query())), _csrf: csrfFrom(page.text), decision: "deny" });
    expect(new URL(denied.headers.location!).searchParams.get("error")).toBe("access_denied");

    const stranger = await admin.get(
      `/admin/oauth/authorize?${query({ redirect_uri: "https://evil.example.test/cb" })}`,
    );
    expect(stranger.status).toBe(400);
    expect(stranger.headers.location).toBeUndefined();
  });

  it("an admin sent to sign in from the approval page comes back to it, not to the overview", async () => {
    const anonymous = await request(service.url).get(`/admin/oauth/authorize?${query()}`);
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.location).toBe("/admin/login");
    const remembered = ([] as string[])
      .concat(anonymous.headers["set-cookie"] ?? [])
      .find((c) => c.startsWith("scim_admin_return="));
    expect(remembered).toMatch(/; Path=\/admin; .*HttpOnly; Secure; SameSite=None/);
    const admin = await signIn("scim-admins", remembered!.split(";")[0]);
    expect(admin.landedOn).toBe(`/admin/oauth/authorize?${query()}`);
    const page = await admin.get(admin.landedOn);
    expect(page.status).toBe(200);
    expect(page.text).toContain(REDIRECT);
    // Without the cookie (another browser), a sign-in lands on the overview.
    expect((await signIn("scim-admins")).landedOn).toBe("/admin");
  });

  it("exchanges a code once, with PKCE when a challenge was sent; a reused code revokes what it gave", async () => {
    const admin = await signIn("scim-admins");
    const verifier = "v".repeat(20) + "0123456789abcdefghijklmnopqrstuvwxyz";
    const challenge = hash("sha256", verifier, "base64url");
    const pkce = { code_challenge: challenge, code_challenge_method: "S256" };

    const wrongVerifier = await token({
      grant_type: "authorization_code",
      code: await approve(admin, pkce),
      redirect_uri: REDIRECT,
      code_verifier: `${verifier}x`,
    });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body.error).toBe("invalid_grant");

    const code = await approve(admin, pkce);
    expect(
      (
        await token(
          { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier },
          "scs_wrong",
        )
      ).status,
    ).toBe(401);
    const first = await token({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
    // The wrong secret above did not use the code up: the client was refused before the code was looked at.
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
    expect(first.body.refresh_token).toMatch(/^scim_rt_/);
    expect((await scim(first.body.access_token)).status).toBe(200);

    const again = await token({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
    expect(again.body.error).toBe("invalid_grant");
    await refusedSoon(first.body.access_token);
    expect((await token({ grant_type: "refresh_token", refresh_token: first.body.refresh_token })).body.error).toBe(
      "invalid_grant",
    );
  });

  it("rotates refresh tokens; a rotated one used again revokes the family", async () => {
    const admin = await signIn("scim-admins");
    const issued = await token({
      grant_type: "authorization_code",
      code: await approve(admin),
      redirect_uri: REDIRECT,
    });
    expect(issued.status).toBe(200);
    const r1 = issued.body.refresh_token as string;
    const second = await token({ grant_type: "refresh_token", refresh_token: r1 });
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(r1);
    const third = await token({ grant_type: "refresh_token", refresh_token: second.body.refresh_token });
    expect(third.status).toBe(200);
    expect((await scim(third.body.access_token)).status).toBe(200);

    const stolen = await token({ grant_type: "refresh_token", refresh_token: r1 }); // a copy of the first, used late
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe("invalid_grant");
    expect((await token({ grant_type: "refresh_token", refresh_token: third.body.refresh_token })).body.error).toBe(
      "invalid_grant",
    );
    await refusedSoon(third.body.access_token);

    // Another approval is another family: untouched.
    const other = await token({ grant_type: "authorization_code", code: await approve(admin), redirect_uri: REDIRECT });
    expect((await token({ grant_type: "refresh_token", refresh_token: other.body.refresh_token })).status).toBe(200);
  });
});

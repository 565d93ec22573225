import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { loadEnv } from "../../src/config/env.js";
import { channelsFromEnv, createNotifications } from "../../src/notify/index.js";
import type { AdminDataSources } from "../../src/admin/sources.js";
import { csrfFrom, startAdminHarness, type AdminHarness } from "../support/adminHarness.js";
import {
  authnRequestIdFromRedirect,
  encodeResponse,
  makeIdpKeys,
  samlLoginCookie,
  signedResponse,
  type IdpKeys,
} from "../support/saml.js";
import { ACS, SP_ENTITY } from "../support/constants.js";

/** The Notifications page for a viewer (signed in with SAML): everything visible, no test button, the POST refused. */
const HOOK_TOKEN = "T0KEN-in-the-webhook-path-123";

describe("Notifications page for a viewer", () => {
  let h: AdminHarness;
  let idp: IdpKeys;

  // Set once the harness's database exists; the admin router reads its sources per request.
  let status: AdminDataSources["notifications"] = () => Promise.reject(new Error("not ready"));
  const sources: Partial<AdminDataSources> = { notifications: () => status() };

  beforeAll(async () => {
    idp = makeIdpKeys("test-idp");
    h = await startAdminHarness(
      {
        SAML_ENTRY_POINT: "https://idp.example.test/sso",
        SAML_ISSUER: SP_ENTITY,
        SAML_IDP_CERT: idp.cert,
        SAML_CALLBACK_URL: ACS,
        SAML_VIEWER_VALUES: "scim-viewers",
      },
      sources,
    );
    const env = loadEnv({ NOTIFY_WEBHOOK_URL: `https://hooks.example.test/in/${HOOK_TOKEN}` });
    const notifications = createNotifications({
      env,
      db: h.database.db,
      clock: systemClock,
      publicUrl: "",
      channels: channelsFromEnv(env),
    });
    await notifications.sendTest("webhook", "ada@example.com"); // one message in the outbox, never sent (no deliverer here)
    status = () => notifications.status();
  });
  afterAll(async () => h?.database.drop());

  it("shows channels by host and the outbox, without the test button; a forged POST is refused", async () => {
    const agent = request.agent(h.app);
    const login = await agent.get("/admin/saml/login");
    const id = authnRequestIdFromRedirect(login.headers.location!);
    const signed = signedResponse(
      { inResponseTo: id, acsUrl: ACS, audience: SP_ENTITY, nameId: "vic@example.com", role: "scim-viewers" },
      idp,
    );
    // The pre-login cookie is Secure (SameSite=None), which supertest's jar will not send over http.
    const acs = await agent
      .post("/admin/saml/acs")
      .set({ Cookie: samlLoginCookie(login) })
      .type("form")
      .send({ SAMLResponse: encodeResponse(signed) });
    expect(acs.status).toBe(303);
    const page = await agent.get("/admin/notifications");
    expect(page.status).toBe(200);
    expect(page.text).toContain('aria-current="page">Notifications');
    expect(page.text).toContain("<code>hooks.example.test</code>");
    expect(page.text).toContain("notification.test");
    expect(page.text).toContain("Test notification sent by ada@example.com");
    expect(page.text).not.toContain(HOOK_TOKEN);
    expect(page.text).not.toContain("Send a test notification");
    const res = await agent
      .post("/admin/notifications/test/webhook")
      .type("form")
      .send({ _csrf: csrfFrom(page.text) });
    expect(res.status).toBe(403);
    expect(res.text).toContain("Your role (viewer) cannot send test notifications");
  });
});

import { copyFile, mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, newLaptopPage, screenshot } from "../support/browser.js";
import {
  authnRequestIdFromRedirect,
  encodeResponse,
  makeIdpKeys,
  signedResponse,
  type IdpKeys,
} from "../support/saml.js";
import { ADMIN_TOKEN, emulatorState, idp, startStack, type Stack } from "../support/stack.js";
import { euPermissions, TWO_WORKSPACES_MAPPING } from "../support/campaigns.js";
import { eventually } from "../support/wait.js";
import request from "supertest";
import { ACS, SP_ENTITY } from "../support/constants.js";

/**
 * A reviewer's campaign page in chromium: a viewer signs in through SAML (the IdP's page is played
 * by a route that answers with a signed response), sees only their items, keeps two with the bulk
 * button, is refused a revoke without a comment (by the form, then by the server), revokes one
 * with a comment, and the grant leaves the platform (the emulator). The screenshots are those in
 * docs/access-review.md's "Campaigns"; UPDATE_DOC_SCREENSHOTS=1 copies them to docs/images/.
 */

const IDP_SSO = "https://idp.example.test/sso";

describe("a reviewer's campaign page in a browser", () => {
  let browser: Browser;
  let stack: Stack;
  let page: Page;
  let keys: IdpKeys;
  let campaignId: string;

  const api = () => ({
    get: (p: string) => request(stack.service.url).get(`/admin/api${p}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`),
    post: (p: string, body: object) =>
      request(stack.service.url).post(`/admin/api${p}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`).send(body),
  });
  const keepScreenshot = async (name: string) => {
    const file = await screenshot(page, name);
    if (process.env.UPDATE_DOC_SCREENSHOTS) {
      await mkdir(path.resolve("docs/images"), { recursive: true });
      await copyFile(file, path.resolve(`docs/images/${name}.png`));
    }
  };

  beforeAll(async () => {
    browser = await launchBrowser();
    keys = makeIdpKeys("test-idp");
    stack = await startStack({
      mapping: TWO_WORKSPACES_MAPPING,
      env: {
        RECONCILE_POLL_MS: "50",
        SAML_ENTRY_POINT: IDP_SSO,
        SAML_ISSUER: SP_ENTITY,
        SAML_IDP_CERT: keys.cert,
        SAML_CALLBACK_URL: ACS,
        SAML_ROLE_ATTRIBUTE: "groups",
        SAML_ADMIN_VALUES: "scim-admins",
        SAML_VIEWER_VALUES: "scim-viewers",
        SAML_IDP_ISSUER: "https://idp.example.test",
      },
    });
    const scim = idp(stack);
    const ids: Record<string, string> = {};
    for (const name of ["alice", "bob", "carol"]) ids[name] = await scim.createUser(`${name}@example.com`);
    await scim.createGroup("Marketing", [ids.alice!, ids.carol!]);
    await scim.createGroup("Sales", [ids.bob!]);
    await eventually("three accounts with their workspaces", async () => {
      const held = (await emulatorState(stack)).dashboardUsers;
      return held.length === 3 && held.every((u) => u.permissions.appGroup.length > 0);
    });
    const started = await api().post("/campaigns", {
      name: "Q4 access review",
      scope: { kind: "everything" },
      dueAt: new Date(Date.now() + 14 * 86_400_000).toISOString(),
      reviewers: [
        { name: "vic@example.com", workspace: "EU Production" },
        { name: "uma@example.com", workspace: "US Production" },
      ],
      fallbackReviewer: "security@example.com",
    });
    expect(started.status).toBe(201);
    campaignId = started.body.id;

    page = await newLaptopPage(browser);
    // The IdP's sign-in page: answers the AuthnRequest with a signed response for vic, a viewer,
    // in a form the reviewer submits (no script: the console's CSP allows none, and none is needed).
    await page.route(`${IDP_SSO}**`, async (route) => {
      const inResponseTo = authnRequestIdFromRedirect(route.request().url());
      const response = signedResponse(
        {
          inResponseTo,
          acsUrl: ACS,
          audience: SP_ENTITY,
          nameId: "vic@example.com",
          role: "scim-viewers",
          roleAttribute: "groups",
        },
        keys,
      );
      await route.fulfill({
        contentType: "text/html",
        body: `<!doctype html><form method="post" action="${stack.service.url}/admin/saml/acs">
          <input type="hidden" name="SAMLResponse" value="${encodeResponse(response)}">
          <button type="submit">Continue to scim-connector</button></form>`,
      });
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it("a reviewer keeps two items, is refused a revoke without a comment, and revokes one with a comment that reaches the platform", async () => {
    const base = `${stack.service.url}/admin`;
    await page.goto(base);
    await page.click("text=Sign in with single sign-on");
    await page.click("text=Continue to scim-connector");
    await page.waitForURL(base);
    expect(await page.textContent(".who")).toContain("vic@example.com");

    await page.click("nav >> text=Campaigns");
    await page.waitForURL(`${base}/campaigns`);
    expect(await page.locator("tbody tr", { hasText: "Q4 access review" }).textContent()).toContain("open");
    await keepScreenshot("campaign-list");

    await page.click("text=Q4 access review");
    await page.waitForURL(`${base}/campaigns/${campaignId}`);
    const users = await page.locator("table tbody tr td:nth-child(2)").allTextContents();
    expect(users.sort()).toEqual(["alice@example.com", "alice@example.com", "carol@example.com", "carol@example.com"]);
    await keepScreenshot("campaign-reviewer");

    // Bulk keep: two checked rows, one button.
    await page.check('input[aria-label="Select alice@example.com basic_access in EU Production"]');
    await page.check('input[aria-label="Select carol@example.com basic_access in EU Production"]');
    await page.click("text=Keep selected");
    await page.waitForSelector(".flash-ok");
    expect(await page.textContent(".flash-ok")).toBe("Kept 2 items.");

    // A revoke without a comment: the form will not send it, and the server refuses it when it is sent anyway.
    const row = page.locator("tbody tr", { hasText: "send_campaigns_canvases in EU Production" }).filter({
      hasText: "carol@example.com",
    });
    const comment = row.locator("input[name=comment]");
    await row.locator("text=Revoke").click();
    expect(await comment.evaluate((el: HTMLInputElement) => el.validity.valueMissing)).toBe(true);
    await comment.evaluate((el: HTMLInputElement) => el.removeAttribute("required"));
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/revoke")),
      row.locator("text=Revoke").click(),
    ]);
    expect(refused.status()).toBe(400);
    expect(await page.textContent("main")).toContain("a revoke needs a comment saying why");
    expect((await api().get(`/campaigns/${campaignId}`)).body.counts).toMatchObject({ kept: 2, revoked: 0 });
    await page.click("text=Back to the campaign");

    await row.locator("input[name=comment]").fill("left the marketing team in October");
    await row.locator("text=Revoke").click();
    await page.waitForSelector(".flash-ok");
    expect(await page.textContent(".flash-ok")).toContain("Revoked 1 item.");
    await eventually("the revoke on the platform", async () =>
      (await euPermissions(stack, "carol@example.com")).every((p) => p !== "send_campaigns_canvases"),
    );
    expect(await euPermissions(stack, "carol@example.com")).toEqual(["basic_access"]);
    expect(await euPermissions(stack, "alice@example.com")).toContain("send_campaigns_canvases");

    // The deny on the access review's row.
    await page.goto(`${base}/access?user=carol`);
    const denied = page.locator("tbody tr", { hasText: "send_campaigns_canvases" });
    expect(await denied.textContent()).toMatch(/revoked in campaign "Q4 access review", by vic@example.com, on /);
    await keepScreenshot("access-review-deny");
  });
});

import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { startService, type Service } from "../../src/service.js";
import { ADMIN_TOKEN, startAdminHarness, type AdminHarness } from "../support/adminHarness.js";
import { arriveAt, launchBrowser, newLaptopPage, screenshot } from "../support/browser.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { sampleSources } from "../support/sampleData.js";

describe("admin UI in a browser", () => {
  let browser: Browser;
  let database: TestDatabase;
  let service: Service;

  beforeAll(async () => {
    browser = await launchBrowser();
    database = await createTestDatabase();
    service = await startService({
      env: loadEnv({ PORT: "0", HOST: "127.0.0.1", ADMIN_TOKEN }),
      databaseUrl: database.url,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await database?.drop();
  });

  it("signs in locally with the admin token and shows the overview", async () => {
    const page = await newLaptopPage(browser);
    await page.goto(`${service.url}/admin`);
    expect(new URL(page.url()).pathname).toBe("/admin/login");
    await screenshot(page, "admin-sign-in");

    await page.fill("#token", "not-the-token-at-all");
    await page.click("button[type=submit]");
    expect(await page.textContent("[role=alert]")).toContain("not right");

    await page.fill("#token", ADMIN_TOKEN);
    await page.click("button[type=submit]");
    await page.waitForURL(`${service.url}/admin`);
    expect(await page.textContent("h1")).toBe("Overview");
    expect(await page.textContent(".who")).toContain("local admin");
    await screenshot(page, "admin-overview");

    await page.click("text=Sign out");
    await arriveAt(page, /\/admin\/login\?signedOut=1$/);
    await page.close();
  });

  it("comes back to the page asked for after signing in", async () => {
    const page = await newLaptopPage(browser);
    await page.goto(`${service.url}/admin/log?outcome=failed`);
    expect(new URL(page.url()).pathname).toBe("/admin/login");
    await page.fill("#token", ADMIN_TOKEN);
    await page.click("button[type=submit]");
    await page.waitForURL(`${service.url}/admin/log?outcome=failed`);
    expect(await page.textContent("h1")).toBe("Reconciliation log");
    // Used once: the next sign-in lands on the overview.
    await page.click("text=Sign out");
    await arriveAt(page, /\/admin\/login\?signedOut=1$/);
    await page.fill("#token", ADMIN_TOKEN);
    await page.click("button[type=submit]");
    await page.waitForURL(`${service.url}/admin`);
    await page.close();
  });

  describe("with sample data (how the lead's pages will look)", () => {
    let h: AdminHarness;
    let server: Server;
    let url: string;
    beforeAll(async () => {
      h = await startAdminHarness({}, sampleSources());
      server = h.app.listen(0, "127.0.0.1");
      await new Promise((resolve) => server.once("listening", resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => server?.close(resolve));
      await h?.database.drop();
    });

    it("renders the overview, log entry and approvals readably, and runs an action without JavaScript", async () => {
      const context = await browser.newContext({ viewport: { width: 1366, height: 900 }, javaScriptEnabled: false });
      const page = await context.newPage();
      await page.goto(`${url}/admin/login`);
      await page.fill("#token", ADMIN_TOKEN);
      await page.click("button[type=submit]");
      await page.waitForURL(`${url}/admin`);
      expect(await page.locator("figure.gauge figcaption").textContent()).toContain("1,250 of 5,000 calls used");
      await screenshot(page, "admin-overview-sample");

      await page.goto(`${url}/admin/log`);
      await page.click("text=2026-11-20 09:15 UTC");
      expect(await page.textContent("h1")).toBe("Log entry");
      expect(await page.locator("tr.diff-removed").count()).toBeGreaterThan(0);
      await screenshot(page, "admin-log-entry-sample");

      await page.goto(`${url}/admin/approvals`);
      await screenshot(page, "admin-approvals-sample");
      await page.check("input[name=id][value=u-2]");
      // The form posts and is redirected back to the same URL, so waitForURL alone would not wait:
      // wait for the redirected page itself.
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === "GET" && r.url() === `${url}/admin/approvals`),
        page.click("text=Approve selected"),
      ]);
      await page.waitForLoadState("load");
      expect(await page.textContent(".flash")).toContain("approve done");
      expect(h.calls).toEqual([
        { action: "approve", args: [["u-2"]], actor: { name: "local admin", role: "admin", via: "local" } },
      ]);
      await context.close();
    });
  });
});

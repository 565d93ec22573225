import { copyFile, mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForQueueIdle } from "../support/queue.js";
import { launchBrowser, newLaptopPage, screenshot } from "../support/browser.js";
import { ADMIN_TOKEN, idp, startStack, type Stack } from "../support/stack.js";
import { ACCESS_MAPPING } from "../support/accessMapping.js";

/**
 * The Access review page in chromium: an admin opens it, filters by workspace and downloads the
 * CSV of that view. The screenshot is the one in docs/access-review.md; UPDATE_DOC_SCREENSHOTS=1
 * copies it to docs/images/.
 */

describe("Access review page in a browser", () => {
  let browser: Browser;
  let stack: Stack;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    stack = await startStack({ mapping: ACCESS_MAPPING() });
    const api = idp(stack);
    const ann = await api.createUser("ann@example.com");
    const bob = await api.createUser("bob@example.com");
    const cid = await api.createUser("cid@example.com");
    await api.createGroup("Platform Admins", [cid]);
    await api.createGroup("Marketing", [ann, bob]);
    await api.createGroup("Support", [ann]);
    await waitForQueueIdle(stack, { deferred: "wait" });
    page = await newLaptopPage(browser);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it("an admin filters by workspace and downloads that view as CSV", async () => {
    const base = `${stack.service.url}/admin`;
    await page.goto(base);
    await page.fill("#token", ADMIN_TOKEN);
    await page.click("button[type=submit]");
    await page.waitForURL(base);
    await page.click("nav >> text=Access review");
    await page.waitForURL(`${base}/access`);
    expect(await page.locator("tbody tr", { hasText: "cid@example.com" }).count()).toBeGreaterThan(0);
    const file = await screenshot(page, "access-review");
    if (process.env.UPDATE_DOC_SCREENSHOTS) {
      await mkdir(path.resolve("docs/images"), { recursive: true });
      await copyFile(file, path.resolve("docs/images/access-review.png"));
    }

    await page.fill("input[name=workspace]", "US Production");
    await page.click("form.filters button[type=submit]");
    await page.waitForURL(/\/access\?.*workspace=US\+Production/);
    const users = await page.locator("table").first().locator("tbody tr td:first-child").allTextContents();
    expect(users).toEqual(["ann@example.com"]);
    expect(await page.locator("tbody tr", { hasText: "rule 'Support agents'" }).count()).toBe(1);

    const [download] = await Promise.all([page.waitForEvent("download"), page.click("text=CSV")]);
    expect(download.suggestedFilename()).toMatch(/^access-report-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = (await readFile((await download.path())!, "utf8")).trim().split("\r\n");
    expect(csv[0]).toMatch(/^userName,scope,workspace,team,permission,groups,rules,/);
    expect(csv.slice(1).map((line) => line.slice(1, -1).split('","').slice(0, 5).join(","))).toEqual([
      "ann@example.com,workspace,US Production,,basic_access",
    ]);
  });
});

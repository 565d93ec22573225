import { copyFile, mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { notify } from "../../src/notify/events.js";
import { approvalRequired } from "../../src/notify/reconcileEvents.js";
import { quarantineStarted } from "../../src/notify/platformEvents.js";
import { launchBrowser, newLaptopPage, screenshot } from "../support/browser.js";
import { startHttpReceiver, type HttpReceiver } from "../support/receivers.js";
import { ADMIN_TOKEN, startStack, type Stack } from "../support/stack.js";

/**
 * The Notifications page in chromium: an admin sends a test notification to one channel and sees
 * its delivery, beside a message parked after a receiver kept failing. The screenshot is the one
 * in docs/operations.md ("Alerts"); UPDATE_DOC_SCREENSHOTS=1 copies it to docs/images/.
 */
describe("Notifications page in a browser", () => {
  let browser: Browser;
  let stack: Stack;
  let receiver: HttpReceiver;
  let page: Page;
  const clock = new ManualClock();

  beforeAll(async () => {
    browser = await launchBrowser();
    receiver = await startHttpReceiver();
    stack = await startStack({
      clock,
      workers: false,
      env: {
        PUBLIC_URL: "https://scim.example.com",
        NOTIFY_WEBHOOK_URL: `${receiver.url}/webhook/T0KEN`,
        NOTIFY_SLACK_WEBHOOK_URL: `${receiver.url}/slack/services/T000/B000/XXXX`,
        NOTIFY_MAX_ATTEMPTS: "2",
        NOTIFY_RETRY_BASE_MS: "10",
      },
    });
    const db = stack.database.db;
    const now = new Date();
    // Slack keeps answering 500 for the first message (parked after 2 attempts); the rest go through.
    receiver.script({ status: 200 }, { status: 500 }, { status: 500 });
    await notify(
      db,
      quarantineStarted({
        family: "scim",
        reason: "auth",
        detail: "5 consecutive calls refused with 401/403",
        since: now,
        resumeAt: new Date(now.getTime() + 900_000),
        lastStatus: 401,
      }),
    );
    const deliverer = stack.service.notifications.deliverer;
    for (let i = 0; i < 3; i++) {
      await deliverer.cycle();
      clock.advance(30); // past the 10-20 ms retry delay
    }
    await notify(db, approvalRequired(new Date(), { count: 612, kinds: ["deprovision"] }));
    await deliverer.cycle();
    page = await newLaptopPage(browser);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await receiver?.close();
  });

  it("an admin sends a test notification and sees every delivery's state", async () => {
    const base = `${stack.service.url}/admin`;
    await page.goto(base);
    await page.fill("#token", ADMIN_TOKEN);
    await page.click("button[type=submit]");
    await page.waitForURL(base);
    await page.click("nav >> text=Notifications");
    await page.waitForURL(`${base}/notifications`);
    expect(await page.locator("text=HTTP 500: receiver says no").count()).toBe(1);

    await page
      .locator("tr", { hasText: "webhook" })
      .first()
      .locator("button", { hasText: "Send a test notification" })
      .click();
    await page.waitForURL(`${base}/notifications`);
    expect(await page.locator(".flash-ok").textContent()).toContain("Test notification queued for webhook");
    await stack.service.notifications.deliverer.cycle();
    await page.reload();
    expect(
      await page.locator("tbody tr", { hasText: "notification.test" }).locator(".badge", { hasText: "sent" }).count(),
    ).toBe(1);
    expect(await page.content()).not.toContain("T0KEN");
    const file = await screenshot(page, "notifications");
    if (process.env.UPDATE_DOC_SCREENSHOTS) {
      await mkdir(path.resolve("docs/images"), { recursive: true });
      await copyFile(file, path.resolve("docs/images/notifications.png"));
    }
  });
});

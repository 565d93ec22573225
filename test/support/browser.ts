import { mkdir } from "node:fs/promises";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { CHROMIUM_PATH } from "./browserPresence.js";

/**
 * Browser tests drive Debian's chromium (apt-get install chromium; .ci/run does it) through
 * playwright-core, which ships no browser of its own. Screenshots land in test-output/screenshots/.
 * Whether they run is the browser tier's decision (vitest.config.ts), not each file's: without
 * chromium the tier skips (the global setup prints one line saying how to run them), except under
 * CI=true, where a missing browser is a failure (the same rule as the conformance suites).
 */

const SCREENSHOT_DIR = path.resolve("test-output/screenshots");

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** A page with a laptop-sized viewport. */
export async function newLaptopPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  return context.newPage();
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * page.waitForURL, with a failure that says where the browser is instead and what that page's
 * heading and alert say (a timeout alone does not tell a slow answer from a wrong page).
 */
export async function arriveAt(page: Page, url: string | RegExp): Promise<void> {
  try {
    await page.waitForURL(url);
  } catch (error) {
    const text = (selector: string) => page.textContent(selector, { timeout: 1_000 }).catch(() => null);
    const [heading, alert] = [await text("h1"), await text("[role=alert]")];
    throw new Error(
      `expected the page at ${String(url)}; the browser is at ${page.url()} (h1: ${JSON.stringify(heading)}, alert: ${JSON.stringify(alert)}): ${(error as Error).message}`,
    );
  }
}

import { mkdir } from "node:fs/promises";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  browserCiFailure,
  browserMustRun,
  browserPresent,
  browserSkipMessage,
  CHROMIUM_PATH,
} from "./browserPresence.js";

/**
 * Browser tests drive Debian's chromium (apt-get install chromium; .ci/run does it) through
 * playwright-core, which ships no browser of its own. Screenshots land in test-output/screenshots/.
 * Without chromium, the browser tests skip (the global setup prints one line saying how to run
 * them), except under CI=true, where a missing browser is a failure (the same rule as the
 * conformance suites).
 */

const SCREENSHOT_DIR = path.resolve("test-output/screenshots");

/** describe() for a browser test file: runs when chromium is there, else skips (or fails under CI=true). */
export function describeInBrowser(name: string, body: () => void): void {
  if (browserPresent) {
    describe(name, body);
    return;
  }
  describe(`${name} (${browserSkipMessage})`, () => {
    if (browserMustRun) it("finds chromium under CI=true", () => expect.fail(browserCiFailure));
    // eslint-disable-next-line vitest/no-disabled-tests -- without chromium the browser tests report a skip; CI=true fails instead
    else it.skip(browserSkipMessage, () => undefined);
  });
}

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

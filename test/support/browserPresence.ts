import { existsSync } from "node:fs";

/**
 * Where the browser tests look for Debian's chromium, and what they say when it is not there.
 * Kept free of vitest and playwright imports so the global setup can print the line once per run.
 */

/** CHROMIUM_PATH overrides the location (and lets the skip/fail behaviour itself be checked). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const browserPresent = existsSync(CHROMIUM_PATH);
export const browserMustRun = process.env.CI === "true";

const absent = `there is no chromium at ${CHROMIUM_PATH}; to run them: apt-get install -y chromium (or set CHROMIUM_PATH)`;
export const browserSkipMessage = `SKIPPED browser tests (test/browser): ${absent}`;
export const browserCiFailure = `CI=true requires the browser tests, but ${absent}`;

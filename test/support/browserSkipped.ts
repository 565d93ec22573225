import { it } from "vitest";
import { browserSkipMessage } from "./browserPresence.js";

/**
 * The browser tier without chromium outside CI (vitest.config.ts runs this file instead of
 * test/browser/): one skipped test whose title says how to run them; the global setup prints
 * the same line.
 */
// eslint-disable-next-line vitest/no-disabled-tests -- without chromium the browser tier reports a skip; CI=true fails instead
it.skip(browserSkipMessage, () => undefined);

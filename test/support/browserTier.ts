import { browserCiFailure, browserMustRun, browserPresent } from "./browserPresence.js";

/**
 * The browser tier's setup file (vitest.config.ts), run before every file under test/browser/.
 * Without chromium under CI=true each of its files fails here, saying what is missing, instead of
 * on playwright's "executable doesn't exist" (outside CI the tier ran only browserSkipped.ts).
 */
if (!browserPresent && browserMustRun) throw new Error(browserCiFailure);

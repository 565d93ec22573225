/**
 * Where this process sends its platform calls (`PlatformTarget`) and the one transport it opens to
 * it (`createPlatformTransport`), which the reconciler and the mirror sync share.
 */
import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import type { AnnouncedLimitWatch } from "./announcedLimit.js";
import type { PlatformQuarantine } from "./quarantine.js";
import { HttpTransport, type HttpOutcome } from "./transport.js";

/** Where the connector sends SCIM calls: the platform, or the emulator standing in for it. */
export type PlatformTarget = { url: string; scimToken: string; apiKey: string | undefined; requestOrigin: string };

/**
 * The one HTTP transport of this process to the platform (its per-family 429 pauses are shared by
 * the reconciler and the mirror sync); every outcome is reported to the quarantine, and the SCIM
 * family's answers to the watch of the platform's announced limit.
 */
export function createPlatformTransport(options: {
  env: Pick<Env, "PLATFORM_TIMEOUT_MS">;
  clock: Clock;
  platform: PlatformTarget;
  quarantine?: PlatformQuarantine;
  announcedLimit?: AnnouncedLimitWatch;
}): HttpTransport {
  const { quarantine, announcedLimit } = options;
  return new HttpTransport({
    baseUrl: options.platform.url,
    timeoutMs: options.env.PLATFORM_TIMEOUT_MS,
    clock: options.clock,
    observe: (family: string, outcome: HttpOutcome) => {
      quarantine?.observe(family, outcome);
      announcedLimit?.observe(family, outcome);
    },
  });
}

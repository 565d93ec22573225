import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { getAnnouncedLimit, recordAnnouncedLimit, type AnnouncedLimit } from "../db/reconcile/budgetRepository.js";
import { log } from "../logging/logger.js";
import type { HttpOutcome } from "./transport.js";

/**
 * The SCIM family's limit as the platform announces it on its answers, beside the budget the
 * connector spends (PLATFORM_SCIM_DAILY_BUDGET). The platform's older pages say 5,000 requests a
 * day per company and its current OpenAPI description says 20,000; which one a company has is
 * between it and the platform. The platform does not publish its rate-limit headers: the connector
 * reads the common `X-RateLimit-Limit` (what the emulator sends) and the IETF draft's
 * `RateLimit-Limit`, shows the figure and warns once when it differs from the budget. It never
 * raises the budget by itself: spending more is an admin's decision (docs/reconciler.md).
 */
const HEADERS = ["x-ratelimit-limit", "ratelimit-limit"] as const;
const FAMILY = "scim";

export class AnnouncedLimitWatch {
  private seen: number | undefined;
  private pending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly budgetLimit: number,
  ) {}

  /** The transport's observer: called after every attempt, never throws, never waits. */
  observe(family: string, outcome: HttpOutcome): void {
    if (family !== FAMILY || outcome.kind !== "ok") return;
    const announced = announcedIn(outcome.headers);
    if (!announced || announced.announced === this.seen) return;
    this.seen = announced.announced;
    this.pending = this.pending
      .then(() => recordAnnouncedLimit(this.db, FAMILY, announced, this.clock.now()))
      .then((changed) => {
        if (changed && announced.announced !== this.budgetLimit) {
          log.warn("platform", "the platform announces a SCIM limit other than the budget; the budget is unchanged", {
            announced: announced.announced,
            header: announced.header,
            budget: this.budgetLimit,
            setting: "PLATFORM_SCIM_DAILY_BUDGET",
          });
        }
      })
      .catch((error: unknown) => {
        this.seen = undefined; // try again with the next answer
        log.warn("platform", "could not record the platform's announced limit", { error });
      });
  }

  /** Waits for the writes started by `observe` (tests, shutdown). */
  async settled(): Promise<void> {
    await this.pending;
  }
}

/** The SCIM family's limit as last announced by the platform, on any replica. */
export function scimAnnouncedLimit(db: Database): Promise<AnnouncedLimit | undefined> {
  return getAnnouncedLimit(db, FAMILY);
}

function announcedIn(headers: Headers): { announced: number; header: string } | undefined {
  for (const header of HEADERS) {
    const value = headers.get(header);
    // The IETF draft allows "limit, policy" lists: the first figure is the one that applies now.
    const announced = value ? Number.parseInt(value.split(",")[0]!.trim(), 10) : Number.NaN;
    if (Number.isSafeInteger(announced) && announced > 0) return { announced, header };
  }
  return undefined;
}

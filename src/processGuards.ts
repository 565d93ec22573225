import { currentResponse } from "./http/requestContext.js";
import { answerWithoutDetail } from "./http/surfaceErrors.js";
import { currentLogContext, log } from "./logging/logger.js";

/**
 * What the process does with a failure that escaped every handler. One request must never stop
 * the service (SCIM, the admin UI and the embedded emulator share the process), so:
 *
 * - an unhandled promise rejection is logged (with the request id when it came from a request)
 *   and the process keeps serving; a rejection unwinds no synchronous state, so that is safe;
 * - an uncaught exception raised while serving a request is logged the same way, that request
 *   is answered with a generic 500 if nothing was sent yet, and the process keeps serving;
 * - an uncaught exception outside any request (a background loop, a driver) leaves state we
 *   cannot vouch for: it is logged and the process exits with status 1 for its supervisor to
 *   restart it (every piece of work is in PostgreSQL and resumes).
 *
 * Installed by `scim-connector start` (src/cli/start.ts) only: tests that run the service in-process
 * keep their runner's own policy.
 */
export function installProcessGuards(): void {
  process.on("unhandledRejection", (reason) => {
    log.error("process", "unhandled promise rejection; still serving", { error: describe(reason) });
    answerInFlightRequest();
  });
  process.on("uncaughtException", (error) => {
    if (currentLogContext().requestId) {
      log.error("process", "uncaught exception while serving a request; still serving", { error: describe(error) });
      answerInFlightRequest();
      return;
    }
    log.error("process", "uncaught exception outside any request; exiting for a restart", { error: describe(error) });
    process.exitCode = 1;
    // Let the log line reach its stream (winston writes asynchronously), then go.
    setTimeout(() => process.exit(1), 200).unref();
  });
}

function answerInFlightRequest(): void {
  const res = currentResponse();
  if (!res || res.writableEnded) return;
  try {
    answerWithoutDetail(res.req, res, 500);
  } catch {
    res.destroy();
  }
}

function describe(reason: unknown): unknown {
  return reason instanceof Error ? reason : { value: String(reason).slice(0, 200) };
}

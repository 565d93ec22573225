import { constants } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import { log } from "../logging/logger.js";

export type GracefulShutdown = {
  /** SHUTDOWN_DELAY_MS: how long the process keeps serving, unready, before it stops accepting. */
  delayMs: number;
  /** SHUTDOWN_TIMEOUT_MS: the whole shutdown's bound, delay included. */
  timeoutMs: number;
  /** Marks the process unready (/readyz 503, `Connection: close`); it keeps serving. */
  drain(): void;
  /** Stops accepting, finishes (or after `graceMs` cuts off) the requests in flight, stops the workers, closes the pools. */
  close(graceMs: number): Promise<void>;
};

/** Time kept back from the requests in flight for the workers to stop and the pools to close. */
const MAX_CLOSE_RESERVE_MS = 2_000;

/**
 * A terminal's Ctrl-C reaches `npm start`'s service from the terminal (SIGINT to the whole
 * process group) and again from npm, which relays it to its child: a repeat this soon after the
 * first is the same Ctrl-C, not a second one.
 */
const RELAYED_SIGNAL_MS = 1_000;

/**
 * Under npm (`npm start`, `npm exec`: npm sets npm_lifecycle_event for its child) the first repeat
 * of the first signal is taken as npm's relay however late it comes: on a loaded machine npm relayed
 * a Ctrl-C more than 1 s after the terminal's copy, and the service took it for a second Ctrl-C and
 * exited at once (130). A real second Ctrl-C reaches it twice too, so the third signal exits at once.
 */
const underNpm = () => Boolean(process.env.npm_lifecycle_event);

/**
 * SIGTERM (Kubernetes, `docker stop`) and SIGINT (Ctrl-C under `npm start`) stop the service
 * without losing a request: unready at once, serving for `delayMs` while load balancers take the
 * replica out, then closing; exit 0 when everything ended in time, 1 at `timeoutMs`. A second
 * signal (past RELAYED_SIGNAL_MS) exits at once (128 + its number, as a shell reports it).
 */
export function stopGracefullyOnSignals(shutdown: GracefulShutdown, options: { relayedWithinMs?: number } = {}): void {
  const relayedWithinMs = options.relayedWithinMs ?? RELAYED_SIGNAL_MS;
  let stoppingSince: number | undefined;
  let firstSignal: NodeJS.Signals | undefined;
  let relayAwaited = underNpm();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stoppingSince !== undefined) {
      if (performance.now() - stoppingSince < relayedWithinMs) return;
      if (relayAwaited && signal === firstSignal) {
        relayAwaited = false;
        return;
      }
      log.warn("process", "second signal during shutdown: exiting at once", { signal });
      process.exit(128 + (constants.signals[signal] ?? 0));
    }
    stoppingSince = performance.now();
    firstSignal = signal;
    console.log(`\n${signal}: shutting down…`);
    log.info("process", "shutting down: unready, still serving until the delay ends", {
      signal,
      delayMs: shutdown.delayMs,
      timeoutMs: shutdown.timeoutMs,
    });
    setTimeout(() => {
      log.error("process", "shutdown did not finish in time; exiting", { timeoutMs: shutdown.timeoutMs });
      process.exit(1);
    }, shutdown.timeoutMs);
    const remainingMs = shutdown.timeoutMs - shutdown.delayMs;
    const graceMs = remainingMs - Math.min(MAX_CLOSE_RESERVE_MS, Math.floor(remainingMs / 2));
    shutdown.drain();
    void delay(shutdown.delayMs)
      .then(() => shutdown.close(graceMs))
      .then(
        () => process.exit(0),
        (error: unknown) => {
          log.error("process", "shutdown failed", { error });
          process.exit(1);
        },
      );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}

// A process stopped as the service is, with no service behind it:
// `node --import tsx test/ops/signalProcess.ts` runs stopGracefullyOnSignals with a relay window of
// 0 ms (any repeat counts as late) and a 1 s delay, and prints `ready`, `signal <name>` on each
// signal (so the test sends the next only once this one was taken: pending signals of one kind
// merge), `drain` and `closed`. Used by test/ops/relayedSignal.test.ts.
import { stopGracefullyOnSignals } from "../../src/cli/shutdown.js";

stopGracefullyOnSignals(
  {
    delayMs: 1_000,
    timeoutMs: 20_000,
    drain: () => console.log("drain"),
    close: async () => console.log("closed"),
  },
  { relayedWithinMs: 0 },
);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => console.log(`signal ${signal}`));
setInterval(() => {}, 60_000);
console.log("ready");

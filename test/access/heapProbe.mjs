// Preloaded into a connector child process (`node --import`) by tests that judge its memory:
// on SIGUSR2 it runs a full collection and prints `heap-used <bytes>` on stdout. Test-only.
import v8 from "node:v8";
import { runInNewContext } from "node:vm";

v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
let probe = 0;
process.on("SIGUSR2", () => {
  gc();
  gc();
  probe++;
  process.stdout.write(`heap-used ${probe} ${process.memoryUsage().heapUsed}\n`);
});

// Preloaded into a connector child process (`node --import`) by test/security/processGuards.test.ts.
// A response to a request carrying `X-Test-Planted-Failure: rejection | exception` is not sent;
// instead the handler that was sending it fails outside Express's reach, as a library callback
// in a discarded promise would: an unhandled rejection, or an exception thrown from a later
// tick. Both happen in the request's async context, where the process policy must catch them.
// Test-only: the product has no such switch.
import http from "node:http";

const planted = new WeakSet();
const end = http.ServerResponse.prototype.end;
http.ServerResponse.prototype.end = function (...args) {
  const kind = this.req?.headers["x-test-planted-failure"];
  if (!kind || planted.has(this)) return end.apply(this, args);
  planted.add(this);
  if (kind === "rejection") void Promise.reject(new Error("planted rejection"));
  else setImmediate(() => {
    throw new Error("planted exception");
  });
  return this;
};

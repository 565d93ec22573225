// Preloaded into a connector child process (`node --import`) by test/security/processGuards.test.ts.
// A response to a request carrying `X-Test-Planted-Failure: rejection | exception` is not sent;
// instead the handler that was sending it fails outside Express's reach, as a library callback
// in a discarded promise would: an unhandled rejection, or an exception thrown from a later
// tick. Both happen in the request's async context, where the process policy must catch them.
// `background` throws outside any request instead (in the context this file was loaded in), as a
// broken background loop would. `body-event` throws from a listener on the request's body stream,
// attached before the app sees the request (as a parser's would be): when the body arrives after
// the head, that listener runs from a later socket read, which the process policy must still tie
// to its request. Test-only: the product has no such switch.
import { AsyncResource } from "node:async_hooks";
import http from "node:http";

const outsideAnyRequest = new AsyncResource("planted-background");

const planted = new WeakSet();
const end = http.ServerResponse.prototype.end;
http.ServerResponse.prototype.end = function (...args) {
  const kind = this.req?.headers["x-test-planted-failure"];
  if (!kind || planted.has(this)) return end.apply(this, args);
  planted.add(this);
  if (kind === "rejection") void Promise.reject(new Error("planted rejection"));
  else if (kind === "background") {
    outsideAnyRequest.runInAsyncScope(() =>
      setImmediate(() => {
        throw new Error("planted background failure");
      }),
    );
    return end.apply(this, args);
  } else
    setImmediate(() => {
      throw new Error("planted exception");
    });
  return this;
};

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, ...args) {
  if (event === "request" && args[0].headers["x-test-planted-failure"] === "body-event")
    args[0].once("data", () => {
      throw new Error("planted body-event failure");
    });
  return emit.call(this, event, ...args);
};

// Preloaded into the service by `npm run bench:drain` (`NODE_OPTIONS=--import …`; bench/rolling-deploy.ts):
// prints `listener-close <epoch ms>` on stdout when the listener on $PORT is closed, the instant after
// which a new connection is refused. The service logs no line at that instant (its drain logs only a
// cut-off), and the bench times it from the process itself, not from what the service reports.
import net from "node:net";

const port = Number(process.env.PORT);
const close = net.Server.prototype.close;
let seen = false;
net.Server.prototype.close = function (...args) {
  if (!seen && this.address()?.port === port) {
    seen = true;
    process.stdout.write(`listener-close ${Date.now()}\n`);
  }
  return close.apply(this, args);
};

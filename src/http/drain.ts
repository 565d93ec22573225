import type { IncomingMessage, Server, ServerResponse } from "node:http";

/**
 * The HTTP half of a graceful shutdown (docs/operations.md, "Stopping and upgrading"). Once
 * draining, /readyz answers 503 and every answer carries `Connection: close`, so keep-alive
 * clients (the IdPs, a load balancer) send their next request over a new connection, to another
 * replica; `close` then stops accepting, lets the requests in flight finish with their whole
 * answer, and cuts off only what is still running when its time is up.
 */
export class HttpDrain {
  private draining = false;

  constructor(private readonly server: Server | undefined) {}

  get isDraining(): boolean {
    return this.draining;
  }

  begin(): void {
    this.draining = true;
  }

  /**
   * `handle` with the draining answers marked `Connection: close` (Node then ends the connection
   * after them). The wrapper keeps the handler's own properties (the app's `express`), so what
   * inspects the server's request listener (the security suite's route enumeration) finds the app.
   */
  wrap<H extends (req: IncomingMessage, res: ServerResponse) => void>(handle: H): H {
    const wrapped = (req: IncomingMessage, res: ServerResponse) => {
      if (this.draining) res.setHeader("Connection", "close");
      handle(req, res);
    };
    return Object.assign(wrapped, handle);
  }

  /**
   * Stops accepting and closes idle connections; resolves when the last request in flight is
   * answered, or after `graceMs` with the connections still open cut off (0: at once).
   */
  async close(graceMs: number): Promise<{ cutOff: boolean }> {
    this.draining = true;
    const server = this.server;
    if (!server) return { cutOff: false };
    let cutOff = false;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        cutOff = true;
        server.closeAllConnections();
      }, graceMs);
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      server.closeIdleConnections();
      if (graceMs <= 0) {
        clearTimeout(timer);
        server.closeAllConnections();
      }
    });
    return { cutOff };
  }
}

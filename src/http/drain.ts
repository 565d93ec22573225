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

  /**
   * Marks the draining answers `Connection: close` (Node then ends the connection after them),
   * from a request listener put ahead of the app's: the app is served as it is.
   */
  constructor(private readonly server: Server | undefined) {
    server?.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => {
      if (this.draining) res.setHeader("Connection", "close");
    });
  }

  get isDraining(): boolean {
    return this.draining;
  }

  begin(): void {
    this.draining = true;
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

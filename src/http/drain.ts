import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * How long the listener may keep taking connections the kernel completed before the close (see
 * `takeBacklog`), and at most half the grace, which the requests in flight keep: a bound for clients
 * that keep connecting, which a load balancer stops.
 */
const MAX_BACKLOG_MS = 5_000;

/**
 * How long a connection taken before the close may stay silent (not one byte of a request) before
 * it is closed: long enough for a client that connected to send what it connected for, short
 * enough that a pre-opened connection does not hold the shutdown until its deadline.
 */
const FIRST_REQUEST_MS = 1_000;

/**
 * The HTTP half of a graceful shutdown (docs/operations.md, "Stopping and upgrading"). Once
 * draining, /readyz answers 503 and every answer carries `Connection: close`, so keep-alive
 * clients (the IdPs, a load balancer) send their next request over a new connection, to another
 * replica; `close` then stops accepting, lets the requests in flight finish with their whole
 * answer, and cuts off only what is still running when its time is up.
 */
export class HttpDrain {
  private draining = false;
  /** Connections accepted that have not had a request yet. */
  private readonly awaitingFirst = new Set<Socket>();
  private readonly firstRequestMs: number;

  /**
   * Marks the draining answers `Connection: close` (Node then ends the connection after them),
   * from a request listener put ahead of the app's: the app is served as it is.
   */
  constructor(
    private readonly server: Server | undefined,
    options: { firstRequestMs?: number } = {},
  ) {
    this.firstRequestMs = options.firstRequestMs ?? FIRST_REQUEST_MS;
    server?.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
      this.awaitingFirst.delete(req.socket);
      if (this.draining) res.setHeader("Connection", "close");
    });
    server?.on("connection", (socket: Socket) => {
      this.awaitingFirst.add(socket);
      socket.once("close", () => this.awaitingFirst.delete(socket));
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
    const startedAt = performance.now();
    if (graceMs > 0) await takeBacklog(server, Math.min(MAX_BACKLOG_MS, graceMs / 2));
    const leftMs = Math.max(0, graceMs - (performance.now() - startedAt));
    let cutOff = false;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        cutOff = true;
        server.closeAllConnections();
      }, leftMs);
      const silent = setTimeout(() => this.closeSilent(), Math.min(this.firstRequestMs, graceMs));
      server.close(() => {
        clearTimeout(timer);
        clearTimeout(silent);
        resolve();
      });
      server.closeIdleConnections();
      if (graceMs <= 0) {
        clearTimeout(timer);
        clearTimeout(silent);
        server.closeAllConnections();
      }
    });
    return { cutOff };
  }

  /**
   * Node counts a connection that has sent nothing yet as busy (its headers' timer has started),
   * so `close` would wait for it until the deadline: one still silent after `firstRequestMs` is
   * closed. One with part of a request arrived is in flight, and kept.
   */
  private closeSilent(): void {
    for (const socket of this.awaitingFirst) if (socket.bytesRead === 0) socket.destroy();
  }
}

/**
 * Closing a listening socket resets every connection the kernel completed that the process has not
 * yet taken (accept), requests already sent on them included: what a client that connected in the
 * last milliseconds before the close would see (issue 45). A timer that decides to close runs before
 * the event loop's next poll for connections, so the close waits for turns of the loop (setImmediate
 * runs after the poll) until one takes no new connection; what those connections send is then
 * answered as any other, with `Connection: close`. Each poll takes one connection at most (the
 * libuv of Node 20 on), so a queue of n takes n turns: hence a bound in time, `maxMs`. A connection
 * completed after that last poll is still reset: no closing of a listening socket avoids that, only
 * the load balancer's lag does.
 */
async function takeBacklog(server: Server, maxMs: number): Promise<void> {
  let taken = 0;
  const onConnection = () => taken++;
  server.on("connection", onConnection);
  const endAt = performance.now() + maxMs;
  try {
    // The first turn's poll may have run before the close was decided: always wait for a second.
    for (let turn = 0; turn < 2 || (taken > 0 && performance.now() < endAt); turn++) {
      taken = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  } finally {
    server.off("connection", onConnection);
  }
}

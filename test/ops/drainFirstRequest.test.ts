import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HttpDrain } from "../../src/http/drain.js";

/**
 * The last milliseconds of a rolling deploy (issue 45): draining answers say `Connection: close`,
 * so keep-alive writers open new connections up to the close. A connection the kernel completed
 * before the close, request sent, is answered (with `Connection: close`), whether the process had
 * taken it yet or not; one that never sends a request is closed after a bounded time, so the
 * shutdown does not wait for it until its deadline.
 */
const CONNECTIONS = 8;
/**
 * Connections queued in the kernel when the close is decided: Node takes one per turn of its event
 * loop, so a bound of 20 turns (the drain's before) left 45 of these to be reset.
 */
const QUEUED = 64;

type RawAnswer = { head: string; error?: string };

/** Everything the server sends on `socket` until it closes, and the transport error if any. */
function readAll(socket: Socket): Promise<RawAnswer> {
  return new Promise((resolve) => {
    let head = "";
    let error: string | undefined;
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (head += chunk));
    socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on("close", () => resolve({ head, ...(error ? { error } : {}) }));
  });
}

const request = (n: number) => `POST /users/${n} HTTP/1.1\r\nHost: drain.test\r\nContent-Length: 2\r\n\r\nhi`;

describe("a connection accepted before the listener closes", () => {
  let server: Server;
  let port: number;
  const accepted: Socket[] = [];
  const clients: Socket[] = [];

  async function start(): Promise<void> {
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.end(`user ${req.url}`));
    });
    server.on("connection", (socket: Socket) => accepted.push(socket));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  }

  /** Opens `count` raw connections and waits until the server has accepted each. */
  async function openAccepted(count: number): Promise<Socket[]> {
    const before = accepted.length;
    const opened = Array.from({ length: count }, () => connect(port, "127.0.0.1"));
    clients.push(...opened);
    while (accepted.length < before + count) await once(server, "connection");
    return opened;
  }

  function refused(): Promise<string | undefined> {
    return new Promise((resolve) => {
      const probe = connect(port, "127.0.0.1");
      probe.on("connect", () => {
        probe.destroy();
        resolve(undefined);
      });
      probe.on("error", (e: NodeJS.ErrnoException) => resolve(e.code));
    });
  }

  /** Resolves when the drain closes the listener (http.Server#close), before the connections are done. */
  function listenerClosing(): Promise<void> {
    return new Promise((resolve) => {
      const close = server.close.bind(server);
      server.close = (callback) => {
        const closed = close(callback);
        resolve();
        return closed;
      };
    });
  }

  afterEach(() => {
    for (const c of clients.splice(0)) c.destroy();
    accepted.length = 0;
    server?.closeAllConnections();
    server?.close();
  });

  it("answers the requests of connections the kernel completed before the close that the process had not taken yet", async () => {
    await start();
    const drain = new HttpDrain(server);
    drain.begin();
    const before = accepted.length;
    // Connected and request written, all before the event loop polls again: the connections wait
    // in the kernel's queue when the close is decided, as when the shutdown's timer fires on a busy loop.
    const sockets = Array.from({ length: QUEUED }, () => connect(port, "127.0.0.1"));
    clients.push(...sockets);
    const answers = sockets.map(readAll);
    sockets.forEach((socket, n) => socket.write(request(n)));
    await new Promise<void>((resolve) => process.nextTick(resolve)); // the connects are issued on the next tick
    expect(accepted.length).toBe(before);
    const closing = drain.close(30_000);

    const got = await Promise.all(answers);
    expect(got.map((a) => a.error ?? a.head.split("\r\n")[0])).toEqual(
      Array.from({ length: QUEUED }, () => "HTTP/1.1 200 OK"),
    );
    for (const answer of got) expect(answer.head.toLowerCase()).toContain("connection: close");
    expect(await closing).toEqual({ cutOff: false });
    expect(await refused()).toBe("ECONNREFUSED");
  });

  it("answers the first request of a connection it took before the close, sent after the listener closed", async () => {
    await start();
    const drain = new HttpDrain(server);
    drain.begin();
    const sockets = await openAccepted(CONNECTIONS);
    const answers = sockets.map(readAll);

    const listenerClosed = listenerClosing();
    const closing = drain.close(30_000);
    await listenerClosed;
    // The listener is closed: nothing new is accepted, and these connections have sent nothing yet.
    expect(await refused()).toBe("ECONNREFUSED");
    sockets.forEach((socket, n) => socket.write(request(n)));

    const got = await Promise.all(answers);
    expect(got.map((a) => a.error ?? a.head.split("\r\n")[0])).toEqual(
      Array.from({ length: CONNECTIONS }, () => "HTTP/1.1 200 OK"),
    );
    for (const [n, answer] of got.entries()) {
      expect(answer.head.toLowerCase()).toContain("connection: close");
      expect(answer.head).toContain(`user /users/${n}`);
    }
    expect(await closing).toEqual({ cutOff: false });
  });

  it(
    "closes a connection that never sends a request after a bounded time, long before the grace for requests in flight",
    { timeout: 15_000 },
    async () => {
      await start();
      const drain = new HttpDrain(server, { firstRequestMs: 200 });
      drain.begin();
      const [silent] = await openAccepted(1);
      const answer = readAll(silent!);

      const closing = drain.close(600_000);
      // Resolves only once every connection is gone: the silent one was closed by the drain, not by the test.
      expect(await closing).toEqual({ cutOff: false });
      expect((await answer).head).toBe("");
    },
  );

  it(
    "still closes an idle keep-alive connection at once and answers a request in flight in full",
    { timeout: 15_000 },
    async () => {
      await start();
      const drain = new HttpDrain(server, { firstRequestMs: 600_000 });
      const [idle, busy] = await openAccepted(2);
      const idleAnswers = readAll(idle!);
      const firstAnswer = new Promise<string>((resolve) => idle!.once("data", (chunk) => resolve(String(chunk))));
      idle!.write(request(0));
      expect(await firstAnswer).toContain("HTTP/1.1 200 OK");
      drain.begin();
      const busyAnswer = readAll(busy!);
      // Half a request: it is in flight when the drain closes, and finishes after.
      busy!.write(`POST /users/1 HTTP/1.1\r\nHost: drain.test\r\nContent-Length: 2\r\n\r\nh`);
      await once(server, "request");

      const closing = drain.close(600_000);
      await idleAnswers; // closed by the drain, not after firstRequestMs
      busy!.write("i");
      const answer = await busyAnswer;
      expect(answer.head.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
      expect(answer.head.toLowerCase()).toContain("connection: close");
      expect(await closing).toEqual({ cutOff: false });
    },
  );
});

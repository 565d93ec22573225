import { createServer, Socket, type AddressInfo } from "node:net";

/**
 * A TCP proxy in front of PostgreSQL that delivers, once, the answer to a marked statement and the
 * server's goodbye in one read: armed, it holds every server message after the client sends a
 * statement containing `marker`; `held` resolves when the statement's ReadyForQuery is held. The
 * test then terminates that backend (pg_terminate_backend); when the server closes the connection,
 * the proxy writes everything it held (the answer, then the FATAL 57P01 ErrorResponse) in one
 * write and closes. This is what a client sees when the termination lands just after a statement
 * ends: pg parses both messages in one go, so whatever the answer's callback does synchronously
 * (release the client to a waiting caller) happens before the error is emitted.
 */
export type HoldingProxy = {
  /** The target's URL with the proxy's host and port. */
  url: string;
  /** Hold the next marked statement's answer; resolves once its ReadyForQuery is held. */
  arm(): Promise<void>;
  close(): Promise<void>;
};

export async function startHoldingProxy(targetUrl: string, marker: string): Promise<HoldingProxy> {
  const target = new URL(targetUrl);
  let armed: (() => void) | undefined;
  const sockets = new Set<Socket>();

  const server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    client.on("close", () => sockets.delete(client));
    upstream.on("close", () => sockets.delete(upstream));
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.connect(Number(target.port), target.hostname);

    let holding = false;
    let onHeld: (() => void) | undefined;
    let pending = Buffer.alloc(0);
    const held: Buffer[] = [];

    client.on("data", (chunk: Buffer) => {
      if (armed && !holding && chunk.includes(marker)) {
        holding = true;
        onHeld = armed;
        armed = undefined;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (!holding) return void client.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      // Every server message: a type byte, then its length (itself included) as an int32.
      while (pending.length >= 5 && pending.length >= 1 + pending.readInt32BE(1)) {
        const message = pending.subarray(0, 1 + pending.readInt32BE(1));
        pending = pending.subarray(message.length);
        held.push(message);
        if (message[0] === "Z".charCodeAt(0)) onHeld?.();
      }
    });
    // The server closed (the terminated backend's goodbye is held): all of it in one write.
    upstream.on("end", () => {
      if (!holding) return void client.end();
      client.end(Buffer.concat([...held, pending]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(targetUrl);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    arm: () => new Promise<void>((resolve) => (armed = resolve)),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

import { createServer, Socket, type AddressInfo } from "node:net";

/**
 * A TCP proxy in front of PostgreSQL that loses, once, the answer to a statement that committed:
 * armed, it watches for a connection whose client sends a statement containing `marker`; when
 * that statement returned at least one row and its work is committed (the first ReadyForQuery
 * saying "idle", no transaction open, after it: at once for a single statement, at the COMMIT
 * inside a transaction), it closes both sides before forwarding that last answer. The client
 * never reads it; the server has committed. Everything else passes through untouched.
 */
export type CutProxy = {
  /** The target's URL with the proxy's host and port. */
  url: string;
  /** Cut the next committed marked statement that returned a row. */
  arm(): void;
  /** Connections cut so far. */
  cuts: number;
  close(): Promise<void>;
};

export async function startCutProxy(targetUrl: string, marker: string): Promise<CutProxy> {
  const target = new URL(targetUrl);
  let armed = false;
  const sockets = new Set<Socket>();
  const proxy: CutProxy = {
    url: "",
    cuts: 0,
    arm: () => void (armed = true),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };

  const server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    client.on("close", () => sockets.delete(client));
    upstream.on("close", () => sockets.delete(upstream));
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    upstream.connect(Number(target.port), target.hostname);

    // The marked statement on this connection: from its Parse/Query until the work is committed.
    let watching = false;
    let rows = 0;
    // Server bytes not yet parsed into whole messages, and whole ones held while watching.
    let pending = Buffer.alloc(0);
    let held: Buffer[] = [];

    client.on("data", (chunk: Buffer) => {
      if (armed && !watching && chunk.includes(marker)) {
        watching = true;
        rows = 0;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      // Every server message: a type byte, then its length (itself included) as an int32.
      while (pending.length >= 5) {
        const length = pending.readInt32BE(1);
        if (pending.length < 1 + length) break;
        const message = pending.subarray(0, 1 + length);
        pending = pending.subarray(1 + length);
        const type = String.fromCharCode(message[0]!);
        if (!watching) {
          client.write(message);
          continue;
        }
        held.push(message);
        if (type === "D") rows++;
        if (type !== "Z") continue;
        const status = String.fromCharCode(message[5]!);
        if (status === "I" && rows > 0 && armed) {
          armed = false;
          proxy.cuts++;
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(Buffer.concat(held));
        held = [];
        // Still inside the transaction: keep watching until it commits; otherwise wait for the next one.
        if (status !== "T") watching = false;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(targetUrl);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as AddressInfo).port);
  proxy.url = url.toString();
  return proxy;
}

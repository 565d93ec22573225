import type { Duplex } from "node:stream";

/** A request the HTTP parser refused, by its error code: the status it is answered with. */
const STATUS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: "431 Request Header Fields Too Large",
  HPE_CHUNK_EXTENSIONS_OVERFLOW: "413 Payload Too Large",
  ERR_HTTP_REQUEST_TIMEOUT: "408 Request Timeout",
};

/** How long the rest of a refused request is read (and dropped) before the connection is cut. */
const DRAIN_MS = 1_000;

/**
 * The server's `clientError`: a request the parser refuses (a request line or headers over the
 * limit, bad framing) is answered with its status and the connection closed. Node's default
 * answers too but destroys the socket at once; with the rest of a long request line still unread,
 * the kernel then resets the connection and the client can lose the answer (Node 24 did for every
 * over-long filter URL the SCIM fuzz sent). So the rest is read and dropped while the answer goes
 * out, and the socket is destroyed after DRAIN_MS at the latest.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = STATUS[error.code ?? ""] ?? "400 Bad Request";
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.resume();
  setTimeout(() => socket.destroy(), DRAIN_MS).unref();
}

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

/**
 * Real notification receivers on loopback: an HTTP server (webhook, Slack and Teams shapes, told
 * apart by path) and an SMTP server. Each records what arrived; the HTTP one answers by a script.
 */

/** `at`: the receiver's own clock (Date.now()) when the request's body had arrived. */
type Received = {
  path: string;
  headers: IncomingMessage["headers"];
  raw: string;
  json: any;
  status: number;
  at: number;
};

/** How to answer the next request: a status (and headers), or "hold" (never answer; the test decides). */
type Answer = { status: number; headers?: Record<string, string> } | "hold";

export type HttpReceiver = {
  url: string;
  /** Requests answered, in order (a held request is added when it is released). */
  received: Received[];
  /** Requests that arrived, answered or not. */
  arrived: number;
  /** Answers for the next requests, in order; afterwards 200. */
  script(...answers: Answer[]): void;
  /** The held requests' responses, to answer or destroy. */
  held: { res: ServerResponse; request: Received }[];
  ofEvent(event: string, path?: string): Received[];
  close(): Promise<void>;
};

export async function startHttpReceiver(): Promise<HttpReceiver> {
  const answers: Answer[] = [];
  const receiver: HttpReceiver = {
    url: "",
    received: [],
    arrived: 0,
    held: [],
    script: (...next) => answers.push(...next),
    ofEvent: (event, path = "/webhook") =>
      receiver.received.filter((r) => r.path === path && r.status < 300 && r.json?.event === event),
    close: async () => {
      for (const h of receiver.held) h.res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = Date.now();
      receiver.arrived++;
      const raw = Buffer.concat(chunks).toString("utf8");
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        json = undefined;
      }
      const answer = answers.shift() ?? { status: 200 };
      const request: Received = {
        path: req.url ?? "",
        headers: req.headers,
        raw,
        json,
        status: answer === "hold" ? 0 : answer.status,
        at,
      };
      if (answer === "hold") {
        receiver.held.push({ res, request });
        return;
      }
      receiver.received.push(request);
      res.writeHead(answer.status, { "content-type": "text/plain", ...answer.headers });
      res.end(answer.status < 300 ? "ok" : "receiver says no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

type Mail = { from: string; to: string[]; raw: string };
export type SmtpReceiver = { url: string; mails: Mail[]; close(): Promise<void> };

/** A real SMTP server (smtp-server) on loopback, plain text, any credentials accepted. */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    logger: false,
    onAuth: (_auth, _session, callback) => callback(null, { user: "notify" }),
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

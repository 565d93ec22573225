import { Agent, request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { freePort } from "../../src/db/embedded.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { eventually } from "../support/wait.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";

/**
 * A rolling deploy as Kubernetes does it: the connector (a child process) serves 16 IdP clients
 * writing users over keep-alive connections and gets SIGTERM. The clients reach it as through a
 * load balancer: once /readyz has said 503 for LB_LAG_MS (the endpoint update), no new request is
 * sent to it. Every request it accepted gets its whole answer (no transport error at all), among
 * them uploads still arriving when the listener has closed; /readyz says 503 before the listener
 * closes; the process exits 0 in bounded time; every write it acknowledged is there after a restart.
 */
const CLIENTS = 16;
const SLOW_UPLOADS = 4;
const DELAY_MS = 2_000;
const LB_LAG_MS = 700;
const TIMEOUT_MS = 20_000;

type Outcome = { at: number; status?: number; id?: string; userName: string; error?: string };
type Answer = { status: number; text: string } | { error: string };

/**
 * One POST /Users on `agent`'s socket; a transport error is returned as its code. `beforeRest`,
 * when given, holds back the second half of the body until it resolves (an upload still arriving).
 */
function post(agent: Agent, url: string, body: unknown, beforeRest?: Promise<void>): Promise<Answer> {
  return new Promise((resolve) => {
    const req = httpRequest(
      `${url}/scim/v2/Users`,
      {
        method: "POST",
        agent,
        headers: { Authorization: `Bearer ${IDP_TOKEN}`, "Content-Type": "application/scim+json" },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, text }));
        res.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    const text = JSON.stringify(body);
    if (!beforeRest) return void req.end(text);
    const half = Math.floor(text.length / 2);
    req.setHeader("Content-Length", Buffer.byteLength(text));
    req.write(text.slice(0, half));
    void beforeRest.then(() => req.end(text.slice(half)));
  });
}

const userBody = (userName: string) => ({
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  userName,
  name: { givenName: "Drain", familyName: "Test" },
  active: true,
});

function recorded(userName: string, answer: Answer): Outcome {
  if ("error" in answer) return { at: Date.now(), userName, error: answer.error };
  let id: string | undefined;
  try {
    id = (JSON.parse(answer.text) as { id?: string }).id;
  } catch {
    id = undefined; // a cut answer: fails the whole-answer check
  }
  return { at: Date.now(), userName, status: answer.status, ...(id ? { id } : {}) };
}

function getStatus(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end();
  });
}

describe("graceful shutdown under keep-alive load", () => {
  let database: TestDatabase;
  let emulator: RunningEmulator;
  let env: Record<string, string>;
  const running: ConnectorProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator();
    const mappingFile = await writeMappingFile();
    env = {
      DATABASE_URL: database.url,
      PLATFORM_URL: emulator.url,
      PLATFORM_SCIM_TOKEN: "dev-scim-token",
      PLATFORM_REQUEST_ORIGIN: "drain-test",
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      RECONCILE_WORKERS: "2",
      RECONCILE_POLL_MS: "100",
      RESYNC_CRON: "off",
      SHUTDOWN_DELAY_MS: String(DELAY_MS),
      SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS),
    };
  });
  afterAll(async () => {
    await Promise.all(running.map((r) => r.kill("SIGKILL")));
    await emulator?.close();
    await database?.drop();
  });

  it(
    "answers every accepted request in full, is unready before it closes, exits 0 and keeps every acknowledged write",
    { timeout: 240_000 },
    async () => {
      const port = await freePort();
      const connector = await spawnConnector(env, port);
      running.push(connector);
      const outcomes: Outcome[] = [];
      let signalledAt = Infinity;
      let unreadyAt = Infinity;
      let listenerClosedAt = Infinity;
      let closed!: () => void;
      const listenerClosed = new Promise<void>((resolve) => (closed = resolve));
      const routedHere = () => Date.now() < unreadyAt + LB_LAG_MS && listenerClosedAt === Infinity;

      const client = async (n: number) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        try {
          for (let i = 0; routedHere(); i++) {
            const userName = `drain-${n}-${i}@example.com`;
            outcomes.push(recorded(userName, await post(agent, connector.url, userBody(userName))));
          }
        } finally {
          agent.destroy();
        }
      };
      const readiness: { at: number; status: number | string }[] = [];
      const pollReadiness = async () => {
        for (;;) {
          const status = await getStatus(`${connector.url}/readyz`);
          readiness.push({ at: Date.now(), status });
          if (status === 503) unreadyAt = Math.min(unreadyAt, Date.now());
          if (status === "ECONNREFUSED") {
            listenerClosedAt = Date.now();
            return closed();
          }
        }
      };
      // Uploads begun while the connector drains, whose second half arrives after its listener closed.
      const slowUpload = async (n: number) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        const userName = `slow-${n}@example.com`;
        outcomes.push(recorded(userName, await post(agent, connector.url, userBody(userName), listenerClosed)));
        agent.destroy();
      };

      const load = [...Array.from({ length: CLIENTS }, (_, n) => client(n)), pollReadiness()];
      // Mid-load: every client has had answers on its keep-alive socket.
      await eventually("answers on every client's socket", async () => outcomes.length >= CLIENTS * 4, {
        timeoutMs: 60_000,
      });
      const exited = new Promise<number | null>((resolve) => connector.child.once("exit", (code) => resolve(code)));
      signalledAt = Date.now();
      connector.child.kill("SIGTERM");
      await eventually("/readyz saying 503", async () => unreadyAt < Infinity, { timeoutMs: DELAY_MS });
      load.push(...Array.from({ length: SLOW_UPLOADS }, (_, n) => slowUpload(n)));
      const exitCode = await exited;
      const exitedAt = Date.now();
      await Promise.all(load);

      // Every request the connector accepted got its whole answer: no transport error, every answer a 201 with the user.
      expect(
        outcomes
          .filter((o) => o.error !== undefined || o.status !== 201 || !o.id)
          .map((o) => ({ ...o, ms: o.at - signalledAt })),
        connector.output().slice(-2000),
      ).toEqual([]);
      expect(outcomes.filter((o) => o.userName.startsWith("slow-") && o.at > listenerClosedAt)).toHaveLength(
        SLOW_UPLOADS,
      );
      // It kept serving while unready, and /readyz said 503 before the listener closed.
      expect(outcomes.filter((o) => o.at > unreadyAt).length).toBeGreaterThan(SLOW_UPLOADS);
      expect(readiness.filter((r) => r.at < signalledAt).every((r) => r.status === 200)).toBe(true);
      expect(unreadyAt).toBeLessThan(listenerClosedAt);
      // Exit 0, in bounded time.
      expect(exitCode).toBe(0);
      expect(exitedAt - signalledAt).toBeLessThan(TIMEOUT_MS);
      const acknowledged = outcomes.filter((o) => o.id !== undefined);

      // Every acknowledged write survives: a new process on the same database serves each one.
      const restarted = await spawnConnector(env, port);
      running.push(restarted);
      const missing: string[] = [];
      for (let i = 0; i < acknowledged.length; i += CLIENTS) {
        await Promise.all(
          acknowledged.slice(i, i + CLIENTS).map(async (o) => {
            const res = await fetch(`${restarted.url}/scim/v2/Users/${o.id}`, {
              headers: { Authorization: `Bearer ${IDP_TOKEN}` },
            });
            const body = (await res.json()) as { userName?: string };
            if (res.status !== 200 || body.userName !== o.userName) missing.push(o.userName);
          }),
        );
      }
      expect(missing).toEqual([]);
    },
  );
});

import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { rawClient } from "../support/fuzz.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";

/**
 * The process policy (src/processGuards.ts) in a real child process: a handler that fails
 * outside Express's reach — an unhandled rejection, or an exception thrown from a later tick —
 * while serving a request. test/security/plantedFailure.mjs (preloaded, test-only) plants the
 * failure on requests that ask for it. The process must log it with the request id, answer
 * that request with its surface's generic 500 (no stack, in NODE_ENV=development too), and keep
 * serving everything else.
 */

const STACK_LINE = /\n\s+at .+:\d+:\d+/;

describe("a failure that escapes every handler does not stop the process", () => {
  let database: TestDatabase;
  let connector: ConnectorProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    const mappingFile = await writeMappingFile();
    connector = await spawnConnector({
      NODE_ENV: "development", // Express's own handler would print stacks here
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${pathToFileURL(path.resolve(import.meta.dirname, "./plantedFailure.mjs")).href}`,
      DATABASE_URL: database.url,
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      RECONCILE_WORKERS: "0",
      RESYNC_CRON: "off",
    });
  }, 90_000);
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await database?.drop();
  });

  const cases: { kind: string; path: string; headers: Record<string, string>; type: RegExp; body: RegExp }[] = [
    {
      kind: "rejection",
      path: "/scim/v2/Users?count=1",
      headers: { Authorization: `Bearer ${IDP_TOKEN}` },
      type: /^application\/scim\+json/,
      body: /"status":"500"/,
    },
    {
      kind: "exception",
      path: "/scim/v2/Users?count=1",
      headers: { Authorization: `Bearer ${IDP_TOKEN}` },
      type: /^application\/scim\+json/,
      body: /"detail":"Internal server error"/,
    },
    {
      kind: "rejection",
      path: "/admin/api/budget",
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      type: /^application\/json/,
      body: /"error":"InternalError"/,
    },
    // (A page that saves a session has begun its answer before end(); the stylesheet has not.)
    {
      kind: "exception",
      path: "/admin/assets/admin.css",
      headers: {},
      type: /^text\/html/,
      body: /Something went wrong/,
    },
    { kind: "exception", path: "/healthz", headers: {}, type: /^application\/json/, body: /"error":"InternalError"/ },
  ];

  it.each(cases)(
    "$kind while serving $path: logged with the request id, answered 500 without a stack, the process serves on",
    async ({ kind, path: target, headers, type, body }) => {
      const c = connector!;
      const requestId = `guarded-${kind}-${Math.random().toString(36).slice(2)}`;
      const res = await fetch(`${c.url}${target}`, {
        headers: { ...headers, "X-Request-Id": requestId, "X-Test-Planted-Failure": kind },
      });
      const text = await res.text();
      expect(res.status, c.output().slice(-2000)).toBe(500);
      expect(res.headers.get("content-type")).toMatch(type);
      expect(text).toMatch(body);
      expect(text).not.toMatch(STACK_LINE);
      expect(text).not.toContain("planted");

      const scim = await fetch(`${c.url}/scim/v2/Users?count=1`, { headers: { Authorization: `Bearer ${IDP_TOKEN}` } });
      expect(scim.status).toBe(200);
      expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
      expect(c.child.exitCode).toBeNull();
      const logged = c
        .output()
        .split("\n")
        .find((line) => line.includes(requestId));
      expect(logged, c.output().slice(-2000)).toMatch(
        kind === "rejection" ? /unhandled promise rejection/ : /uncaught exception while serving a request/,
      );
      expect(logged).toContain("planted");
    },
  );

  it("an exception from a body listener when the body arrives after the head: tied to its request, the process serves on", async () => {
    const c = connector!;
    const requestId = `guarded-body-event-${Math.random().toString(36).slice(2)}`;
    const client = rawClient(c.url, 1);
    const res = await client
      .send({
        method: "POST",
        path: "/scim/v2/Users",
        headers: {
          Authorization: `Bearer ${IDP_TOKEN}`,
          "Content-Type": "application/scim+json",
          "X-Request-Id": requestId,
          "X-Test-Planted-Failure": "body-event",
        },
        body: JSON.stringify({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "late@example.com" }),
        pieces: { count: 2, lateMs: 300 },
      })
      .catch((error: Error) => ({ status: 0, headers: {}, body: Buffer.from(error.message) }));
    client.close();
    expect(res.status, c.output().slice(-2000)).toBe(500);
    expect(res.body.toString("utf8")).toMatch(/"status":"500"/);

    const scim = await fetch(`${c.url}/scim/v2/Users?count=1`, { headers: { Authorization: `Bearer ${IDP_TOKEN}` } });
    expect(scim.status).toBe(200);
    expect(c.child.exitCode).toBeNull();
    const logged = c
      .output()
      .split("\n")
      .find((line) => line.includes("planted body-event failure"));
    expect(logged, c.output().slice(-2000)).toMatch(/uncaught exception while serving a request/);
    expect(logged).toContain(requestId);
  });

  // Last: it ends the process.
  it(
    "an exception outside any request is logged and ends the process with status 1, for its supervisor to restart",
    { timeout: 30_000 },
    async () => {
      const c = connector!;
      const exited = new Promise<number | null>((resolve) =>
        c.child.exitCode !== null ? resolve(c.child.exitCode) : c.child.once("exit", (code) => resolve(code)),
      );
      const res = await fetch(`${c.url}/healthz`, { headers: { "X-Test-Planted-Failure": "background" } });
      expect(res.status).toBe(200);
      expect(await exited).toBe(1);
      expect(c.output()).toMatch(
        /uncaught exception outside any request; exiting for a restart.*planted background failure/,
      );
    },
  );
});

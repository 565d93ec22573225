import net from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * An access export whose client stops reading and goes away must end and free its batches. The
 * connector runs as a real child process over 3,000 held accounts (three batches); 40 downloads
 * are started, read up to their first bytes and dropped. After a full collection (in the child,
 * test/access/heapProbe.mjs) its heap is back within 10 MB of where it was. And one user runs
 * one export at a time: a second, while the first is being read, answers 429 with Retry-After.
 */

const ACCOUNTS = 3_000;
const ABANDONED = 40;
const EXPORT = "/admin/api/access?format=csv";

describe("abandoned access exports", () => {
  let database: TestDatabase;
  let connector: ConnectorProcess;

  beforeAll(async () => {
    database = await createTestDatabase();
    const mappingFile = await writeMappingFile();
    connector = await spawnConnector({
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${pathToFileURL(path.resolve(import.meta.dirname, "./heapProbe.mjs")).href}`,
      DATABASE_URL: database.url,
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      RECONCILE_WORKERS: "0",
      RESYNC_CRON: "off",
    });
    await database.db.query(
      `WITH u AS (
         INSERT INTO idp_users (user_name, resource)
         SELECT 'exported-' || lpad(n::text, 5, '0') || '@example.com', '{}'::jsonb FROM generate_series(1, $1) n
         RETURNING id, user_name)
       INSERT INTO platform_accounts (user_id, user_name, platform_id, state, last_applied, applied_at)
       SELECT id, user_name, 'p-' || id, 'active',
              jsonb_build_object('userName', user_name, 'givenName', 'A', 'familyName', 'B', 'department', 'engineering',
                'companyPermissions', '[]'::jsonb,
                'workspaces', jsonb_build_array(
                  jsonb_build_object('appGroupName', 'EU Production', 'appGroupPermissions', '["basic_access","view_user_profile"]'::jsonb,
                    'appGroupPermissionSets', '[]'::jsonb,
                    'team', '[{"teamName":"Lifecycle","teamPermissions":["basic_access"]}]'::jsonb),
                  jsonb_build_object('appGroupName', 'US Production', 'appGroupPermissions', '["basic_access"]'::jsonb,
                    'appGroupPermissionSets', '[]'::jsonb, 'team', '[]'::jsonb))),
              now()
         FROM u`,
      [ACCOUNTS],
    );
  }, 90_000);
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await database?.drop();
  });

  /** The child's heap after a full collection, as its probe prints it. */
  async function heapUsed(): Promise<number> {
    const seen = (connector.output().match(/heap-used \d+ \d+/g) ?? []).length;
    connector.child.kill("SIGUSR2");
    const line = await eventually(
      "the heap probe's answer",
      async () => connector.output().match(/heap-used \d+ \d+/g)?.[seen],
    );
    return Number(line.split(" ")[2]);
  }

  /** Starts the export on a raw socket that reads nothing after the response's first bytes. */
  async function startDownload(): Promise<{ socket: net.Socket; head: string }> {
    const url = new URL(connector.url);
    const socket = net.connect(Number(url.port), url.hostname);
    socket.write(`GET ${EXPORT} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n\r\n`);
    const head = await new Promise<string>((resolve, reject) => {
      socket.once("data", (chunk: Buffer) => resolve(chunk.toString("latin1")));
      socket.once("error", reject);
    });
    socket.pause(); // reads no more: the server's writes fill the buffers and wait for a drain
    return { socket, head };
  }

  it("a whole export, then 40 abandoned ones: the heap is back within 10 MB", { timeout: 120_000 }, async () => {
    const whole = await fetch(`${connector.url}${EXPORT}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(whole.status).toBe(200);
    expect((await whole.text()).trim().split("\r\n")).toHaveLength(1 + ACCOUNTS * 5); // 4 grants and the department each, and the header
    const before = await heapUsed();

    for (let n = 0; n < ABANDONED; n++) {
      // The previous one has to have ended first (one export per user): wait for it, do not skip it.
      const download = await eventually(`abandoned download ${n} started`, async () => {
        const started = await startDownload();
        if (started.head.startsWith("HTTP/1.1 200")) return started;
        started.socket.destroy();
        return undefined;
      });
      download.socket.destroy();
    }
    // The last one has ended too: the next export is answered.
    await eventually("the last abandoned export ended", async () => {
      const probe = await startDownload();
      probe.socket.destroy();
      return probe.head.startsWith("HTTP/1.1 200");
    });
    const after = await heapUsed();
    console.log(
      `heap after a whole export ${(before / 2 ** 20).toFixed(1)} MB, after ${ABANDONED} abandoned ${(after / 2 ** 20).toFixed(1)} MB`,
    );
    expect(after - before).toBeLessThan(10 * 2 ** 20);
  });

  it(
    "a second export by the same user while the first is being read: 429 with Retry-After",
    { timeout: 60_000 },
    async () => {
      const first = await eventually("a first export started", async () => {
        const started = await startDownload();
        if (started.head.startsWith("HTTP/1.1 200")) return started;
        started.socket.destroy();
        return undefined;
      });
      const second = await fetch(`${connector.url}${EXPORT}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
      first.socket.destroy();
      expect(second.status).toBe(429);
      expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await second.json()).toMatchObject({ error: "TooManyRequestsError" });
    },
  );
});

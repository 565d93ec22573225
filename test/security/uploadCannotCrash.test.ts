import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { rawClient, type RawRequest } from "../support/fuzz.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";

/**
 * A signed-in admin posts a malformed upload to /admin/mapping/preview (the one multipart form,
 * parsed before the CSRF check). busboy reports a broken part header once per part without
 * ending its stream, and those reports come from later socket reads when the body arrives after
 * the head: outside the handler's async context. The connector runs as a real child process;
 * each upload is sent with its head and late, in pieces. Each must be answered once with the
 * page of a bad upload, and the SAME process must still serve SCIM and /readyz.
 */

const FIELD = (name: string, value: string) =>
  `--X\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

const UPLOADS: { name: string; body: string; status: number }[] = [
  { name: "two malformed part headers", body: "--X\r\nbad\r\n\r\nx\r\n--X\r\nbad\r\n\r\ny\r\n--X--\r\n", status: 400 },
  {
    name: "a truncated last part",
    body: `${FIELD("a", "1")}--X\r\nContent-Disposition: form-data; name="b"\r\n\r\nhal`,
    status: 400,
  },
  {
    name: "a broken part header after a good field",
    body: `${FIELD("a", "1")}--X\r\nbad\r\n\r\nx\r\n--X--\r\n`,
    status: 400,
  },
  {
    name: "a file part and no closing boundary, after a large field",
    body: `${FIELD("a", "A".repeat(8000))}--X\r\nContent-Disposition: form-data; name="draft"; filename="m.yaml"\r\nContent-Type: text/yaml\r\n\r\nx\r\n`,
    status: 400,
  },
  {
    name: "too many parts",
    body: `${Array.from({ length: 40 }, (_, n) => FIELD(`f${n}`, "v")).join("")}--X--\r\n`,
    status: 413,
  },
];

describe("a malformed upload from a signed-in admin cannot stop the process", () => {
  let database: TestDatabase;
  let connector: ConnectorProcess | undefined;
  let cookie = "";

  beforeAll(async () => {
    database = await createTestDatabase();
    const mappingFile = await writeMappingFile();
    connector = await spawnConnector({
      DATABASE_URL: database.url,
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      RECONCILE_WORKERS: "0",
      RESYNC_CRON: "off",
    });
    const page = await fetch(`${connector.url}/admin/login`);
    const pageCookie = page.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    const login = await fetch(`${connector.url}/admin/login`, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: pageCookie, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, token: ADMIN_TOKEN }),
    });
    expect(login.status).toBe(303);
    cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
  }, 90_000);
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await database?.drop();
  });

  const cases = UPLOADS.flatMap((upload) => [
    { ...upload, when: "with the head", pieces: undefined },
    { ...upload, when: "late, whole", pieces: { count: 1, lateMs: 500 } },
    { ...upload, when: "late, in pieces", pieces: { count: 3, lateMs: 150 } },
  ]);

  it.each(cases)(
    "$name, body $when: answered $status once, and the same process still serves SCIM",
    { timeout: 30_000 },
    async ({ body, status, pieces }) => {
      const c = connector!;
      const client = rawClient(c.url, 1);
      const request: RawRequest = {
        method: "POST",
        path: "/admin/mapping/preview",
        headers: { Cookie: cookie, "Content-Type": "multipart/form-data; boundary=X" },
        body,
        pieces,
      };
      const res = await client
        .send(request)
        .catch((error: Error) => ({ status: 0, headers: {}, body: Buffer.from(error.message) }));
      client.close();
      expect(res.status, `${res.body.toString("utf8").slice(0, 300)}\n${c.output().slice(-2000)}`).toBe(status);
      expect(String(res.headers["content-type" as keyof typeof res.headers])).toMatch(/^text\/html/);

      const scim = await fetch(`${c.url}/scim/v2/Users?count=1`, {
        headers: { Authorization: `Bearer ${IDP_TOKEN}` },
      }).catch((error: Error) => error);
      expect(scim instanceof Error ? scim.message : scim.status, c.output().slice(-2000)).toBe(200);
      expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
      expect(c.child.exitCode).toBeNull();
      // Answered once: no second page thrown at the process, in this request or outside any.
      expect(c.output()).not.toMatch(/uncaught exception/);
    },
  );
});

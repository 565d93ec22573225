import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCIM_TOKEN, startScimHarness, userBody, type ScimHarness } from "../support/scimHarness.js";

/** One raw request, for what supertest cannot send (an absolute-form target, OPTIONS without a body). */
function raw(
  baseUrl: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path: target, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

/** The SCIM server's own front (src/http/scim/index.ts): what it answers that Express used to. */
describe("SCIM front on node:http", () => {
  let h: ScimHarness;
  let userId = "";
  const auth = { authorization: `Bearer ${SCIM_TOKEN}` };
  beforeAll(async () => {
    h = await startScimHarness();
    userId = (await h.post("/Users", userBody())).body.id;
  });
  afterAll(async () => {
    await h?.close();
  });

  it("serves /scim/v2 case-insensitively, with one trailing slash, and HEAD as GET without a body", async () => {
    const list = await raw(h.service.url, "GET", "/SCIM/V2/users/", auth);
    expect(list.status).toBe(200);
    expect(JSON.parse(list.body).totalResults).toBe(1);
    const head = await raw(h.service.url, "HEAD", `/scim/v2/Users/${userId}/`, auth);
    expect(head.status).toBe(200);
    expect(head.headers.etag).toMatch(/^W\/"/);
    expect(head.body).toBe("");
  });

  it("routes an absolute-form request target by its path", async () => {
    const res = await raw(h.service.url, "GET", `${h.service.url}/scim/v2/Users/${userId}`, auth);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).id).toBe(userId);
  });

  it("answers OPTIONS with the methods of the path, after authentication", async () => {
    const collection = await raw(h.service.url, "OPTIONS", "/scim/v2/Users", auth);
    expect(collection.status).toBe(204);
    expect(collection.headers.allow).toBe("GET, HEAD, POST");
    const member = await raw(h.service.url, "OPTIONS", `/scim/v2/Users/${userId}`, auth);
    expect(member.headers.allow).toBe("GET, HEAD, PUT, PATCH, DELETE");
    const none = await raw(h.service.url, "OPTIONS", "/scim/v2/Me", auth);
    expect(none.status).toBe(404);
    expect(JSON.parse(none.body).detail).toBe("No SCIM endpoint OPTIONS /Me");
    expect((await raw(h.service.url, "OPTIONS", "/scim/v2/Users")).status).toBe(401);
  });

  it("answers what no route serves with an RFC 7644 404, and a malformed id with a 400", async () => {
    const root = await raw(h.service.url, "GET", "/scim/v2", auth);
    expect(root.status).toBe(404);
    expect(JSON.parse(root.body)).toMatchObject({ status: "404", detail: "No SCIM endpoint GET /" });
    const post = await h.post(`/Users/${userId}`, userBody());
    expect(post.status).toBe(404);
    expect(post.body.detail).toBe(`No SCIM endpoint POST /Users/${userId}`);
    const bad = await raw(h.service.url, "DELETE", "/scim/v2/Users/%zz", auth);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ scimType: "invalidSyntax" });
    // Other surfaces are still Express's: a path beside /scim/v2 is not SCIM's.
    const beside = await raw(h.service.url, "GET", "/scim/v2x/Users", auth);
    expect(beside.status).toBe(404);
    expect(JSON.parse(beside.body)).toEqual({ error: "NotFound", message: "No such route" });
  });

  it("gives every SCIM answer a request id, the incoming one when it is sane", async () => {
    const res = await raw(h.service.url, "GET", `/scim/v2/Users/${userId}`, { ...auth, "x-request-id": "okta-42" });
    expect(res.headers["x-request-id"]).toBe("okta-42");
    const unauthenticated = await raw(h.service.url, "GET", "/scim/v2/Users");
    expect(unauthenticated.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { generateToken, hashToken } from "../../src/auth/scimTokens.js";
import { TokenRepository } from "../../src/db/auth/tokenRepository.js";
import { PATCH_OP, SCIM_TOKEN, startScimHarness, userBody, type ScimHarness } from "../support/scimHarness.js";

const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";

/** Every error path of the SCIM server answers RFC 7644 JSON with the right status, never a 500. */
describe("SCIM errors", () => {
  let h: ScimHarness;
  let base: string;
  let userId: string;
  beforeAll(async () => {
    h = await startScimHarness({ SCIM_MAX_BODY_BYTES: "4096" });
    base = `${h.service.url}/scim/v2`;
    userId = (await h.post("/Users", userBody())).body.id;
  });
  afterAll(async () => {
    await h?.close();
  });

  const expectError = (res: request.Response, status: number, scimType?: string) => {
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.headers["content-type"]).toMatch(/^application\/scim\+json/);
    expect(res.body.schemas).toEqual([ERROR]);
    expect(res.body.status).toBe(String(status));
    expect(res.body.detail).toEqual(expect.any(String));
    if (scimType) expect(res.body.scimType).toBe(scimType);
  };

  describe("authentication", () => {
    it.each([
      ["no Authorization header", undefined],
      ["a wrong token", `Bearer ${SCIM_TOKEN}x`],
      ["a non-bearer scheme", `Basic ${Buffer.from("a:b").toString("base64")}`],
      ["a bare token", "non-token"],
    ])("401 with WWW-Authenticate for %s", async (_name, header) => {
      const req = request(base).get("/Users");
      const res = await (header ? req.set("Authorization", header) : req);
      expectError(res, 401);
      expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
    });

    it("accepts a token made with `token create` (hashed in the database) and refuses it once revoked", async () => {
      const token = generateToken();
      const tokens = new TokenRepository(h.service.db);
      await tokens.create("okta-test", hashToken(token), token.slice(0, 10));
      const presented = () => request(base).get("/Users").set("Authorization", `Bearer ${token}`);
      expect((await presented()).status).toBe(200);
      expect(await tokens.revoke("okta-test")).toBe(1);
      // The verifier remembers a check for up to 10 s (docs/operations.md): the revoked token itself
      // must be refused once that has passed.
      await vi.waitFor(async () => expectError(await presented(), 401), { timeout: 15_000, interval: 500 });
    });

    it("refuses a revoked token it never saw at once", async () => {
      const token = generateToken();
      const tokens = new TokenRepository(h.service.db);
      await tokens.create("okta-revoked-unused", hashToken(token), token.slice(0, 10));
      expect(await tokens.revoke("okta-revoked-unused")).toBe(1);
      expectError(await request(base).get("/Users").set("Authorization", `Bearer ${token}`), 401);
    });
  });

  describe("request bodies", () => {
    const raw = (
      method: "post" | "put" | "patch",
      path: string,
      body: string | Buffer,
      type = "application/scim+json",
    ) => request(base)[method](path).set("Authorization", `Bearer ${SCIM_TOKEN}`).set("Content-Type", type).send(body);

    it("400 invalidSyntax for malformed JSON", async () => {
      expectError(await raw("post", "/Users", '{ "acve": tre, "userName": '), 400, "invalidSyntax");
    });
    it("400 invalidSyntax for a JSON array or primitive", async () => {
      expectError(await raw("post", "/Users", "[1,2]"), 400, "invalidSyntax");
      expectError(await raw("post", "/Users", '"x"'), 400, "invalidSyntax");
    });
    it("415 for a non-JSON content type", async () => {
      expectError(await raw("post", "/Users", "userName=x", "application/x-www-form-urlencoded"), 415);
      expectError(await raw("post", "/Users", "hello", "text/plain"), 415);
    });
    it("accepts application/json as well as application/scim+json", async () => {
      expect((await raw("post", "/Users", JSON.stringify(userBody()), "application/json; charset=utf-8")).status).toBe(
        201,
      );
    });
    it("400 when a write has no body", async () => {
      expectError(await request(base).post("/Users").set("Authorization", `Bearer ${SCIM_TOKEN}`), 400);
      expectError(await request(base).patch(`/Users/${userId}`).set("Authorization", `Bearer ${SCIM_TOKEN}`), 400);
    });
    it("413 for a body over SCIM_MAX_BODY_BYTES", async () => {
      expectError(await raw("post", "/Users", JSON.stringify(userBody({ title: "x".repeat(10_000) }))), 413);
    });
    it("400 for a body nested too deeply", async () => {
      expectError(
        await raw("post", "/Users", `{"userName":"deep@example.com","x":${"[".repeat(200)}${"]".repeat(200)}}`),
        400,
        "invalidSyntax",
      );
    });
    it("bad UTF-8 and NUL characters never produce a 500", async () => {
      const bytes = Buffer.concat([
        Buffer.from('{"userName":"bad'),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('@example.com"}'),
      ]);
      expect((await raw("post", "/Users", bytes)).status).toBeLessThan(500);
      expectError(
        await raw("post", "/Users", JSON.stringify(userBody({ userName: "nul\u0000@example.com" }))),
        400,
        "invalidValue",
      );
    });
    it("400 for a userName too long to index", async () => {
      const long = Array.from({ length: 3000 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join(
        "",
      );
      expectError(await raw("post", "/Users", JSON.stringify({ userName: long })), 400, "invalidValue");
    });
  });

  describe("resources", () => {
    it("400 invalidValue when userName is missing, empty or not a string", async () => {
      expectError(await h.post("/Users", { ...userBody(), userName: undefined }), 400, "invalidValue");
      expectError(await h.post("/Users", userBody({ userName: "" })), 400, "invalidValue");
      expectError(await h.post("/Users", userBody({ userName: 5 })), 400, "invalidValue");
      expectError(await h.put(`/Users/${userId}`, { userame: "typo" }), 400, "invalidValue");
    });
    it("400 invalidValue for a group without displayName and for malformed members", async () => {
      expectError(await h.post("/Groups", { members: [] }), 400, "invalidValue");
      expectError(await h.post("/Groups", { displayName: "G", members: [{ value: 5 }] }), 400, "invalidValue");
    });
    it("404 for unknown ids (UUID or not) and unknown endpoints", async () => {
      expectError(await h.get("/Users/00919288221112222"), 404);
      expectError(await h.get("/Users/6f1f0d7e-0000-4000-8000-000000000000"), 404);
      expectError(await h.put("/Users/6f1f0d7e-0000-4000-8000-000000000000", userBody()), 404);
      expectError(await h.patch("/Groups/nope", { Operations: [{ op: "add", path: "members", value: [] }] }), 404);
      expectError(await h.del("/Groups/6f1f0d7e-0000-4000-8000-000000000000"), 404);
      expectError(await h.get("/Bulk"), 404);
      expectError(await h.get("/serviceConfiguration"), 404);
    });
    it("never answers 500 to odd but well-formed input", async () => {
      expectError(await h.get("/Users/%E0%A4%A"), 400);
      expect(
        (await h.post("/Users", JSON.parse('{"userName":"proto@example.com","__proto__":{"active":"zzz"}}'))).status,
      ).toBeLessThan(500);
      expect(
        (
          await h.patch(`/Users/${userId}`, {
            Operations: [{ op: "replace", value: JSON.parse('{"__proto__":{"x":1}}') }],
          })
        ).status,
      ).toBeLessThan(500);
      expectError(await h.get(`/Users?filter=${encodeURIComponent('addresses eq "x"')}`), 400, "invalidFilter");
      expect((await h.get(`/Users?filter=${encodeURIComponent('groups.value eq "x"')}`)).status).toBe(200);
      expect((await h.get(`/Users?filter=${encodeURIComponent('x509Certificates.value co "x"')}`)).status).toBe(200);
      expect((await h.get("/Users?startIndex=999999999999&count=1")).status).toBe(200);
      expectError(await h.get(`/Users?filter=${encodeURIComponent('meta.version eq "x"')}`), 400, "invalidFilter");
      expectError(
        await h.patch(`/Users/${userId}`, { Operations: [{ op: "replace", path: "groups", value: [] }] }),
        400,
        "mutability",
      );
      expectError(await h.post("/Groups", { displayName: "G", members: 5 }), 400, "invalidValue");
    });

    it("409 uniqueness when a PUT or PATCH takes another user's userName", async () => {
      const other = (await h.post("/Users", userBody())).body;
      expectError(
        await h.patch(`/Users/${userId}`, {
          Operations: [{ op: "replace", path: "userName", value: other.userName.toUpperCase() }],
        }),
        409,
        "uniqueness",
      );
    });
  });

  describe("filters and paging", () => {
    it.each([
      ['userName eq "a" and', "invalidFilter"],
      ["userName eq unquoted", "invalidFilter"],
      ['userName zz "a"', "invalidFilter"],
      ['nosuchattribute eq "a"', "invalidFilter"],
      ['(userName eq "a"', "invalidFilter"],
      ['userName eq "a")', "invalidFilter"],
      ['active eq "yes"', "invalidFilter"],
      ['meta.created gt "not a date"', "invalidFilter"],
      ['name eq "x"', "invalidFilter"],
      ['emails[type eq "work"].value eq "x"', "invalidFilter"],
      ['"unterminated', "invalidFilter"],
    ])("400 %s for filter %s", async (filter, scimType) => {
      expectError(await h.get(`/Users?filter=${encodeURIComponent(filter)}`), 400, scimType);
    });
    it("400 for a repeated filter and for a non-integer startIndex or count", async () => {
      expectError(await h.get(`/Users?filter=${encodeURIComponent('userName eq "a"')}&filter=x`), 400, "invalidFilter");
      expectError(await h.get("/Users?startIndex=abc"), 400, "invalidValue");
      expectError(await h.get("/Users?count=1.5"), 400, "invalidValue");
    });
    it("clamps startIndex below 1 and negative counts", async () => {
      const res = await h.get("/Users?startIndex=-4&count=-1");
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ startIndex: 1, itemsPerPage: 0 });
    });
    it("400 for a filter that is too long", async () => {
      expectError(
        await h.get(`/Users?filter=${encodeURIComponent(`userName eq "${"a".repeat(5000)}"`)}`),
        400,
        "invalidFilter",
      );
    });
  });

  describe("PATCH", () => {
    const patch = (Operations: unknown, extra: Record<string, unknown> = {}) =>
      h.patch(`/Users/${userId}`, { schemas: [PATCH_OP], Operations, ...extra });
    it.each([
      ["no Operations", undefined, "invalidSyntax"],
      ["empty Operations", [], "invalidSyntax"],
      ["an unknown op", [{ op: "move", path: "title", value: "x" }], "invalidSyntax"],
      ["a remove without a path", [{ op: "remove" }], "noTarget"],
      ["a path-less add whose value is not an object", [{ op: "add", value: "x" }], "invalidValue"],
      ["an add without a value", [{ op: "add", path: "title" }], "invalidValue"],
      ["an unknown attribute path", [{ op: "replace", path: "nosuch", value: "x" }], "invalidPath"],
      ["a malformed path", [{ op: "replace", path: "emails[type eq", value: "x" }], "invalidPath"],
      ["a non-string path", [{ op: "replace", path: 5, value: "x" }], "invalidPath"],
      ["a read-only attribute", [{ op: "replace", path: "id", value: "x" }], "mutability"],
      ["a wrongly typed value", [{ op: "replace", path: "active", value: "maybe" }], "invalidValue"],
      [
        "a replace whose filter matches nothing and cannot create",
        [{ op: "replace", path: 'emails[value co "zz"]', value: { value: "a" } }],
        "noTarget",
      ],
    ])("400 for %s", async (_name, operations, scimType) => {
      expectError(await patch(operations), 400, scimType);
    });
    it("400 for group member sub-attribute changes", async () => {
      const g = (await h.post("/Groups", { displayName: "PatchErrors" })).body;
      expectError(
        await h.patch(`/Groups/${g.id}`, {
          Operations: [{ op: "replace", path: 'members[value eq "x"].display', value: "y" }],
        }),
        400,
        "mutability",
      );
    });
  });
});

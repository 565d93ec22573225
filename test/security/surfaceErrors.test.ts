import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { requestContext } from "../../src/http/requestContext.js";
import { finalErrorHandler, notFound } from "../../src/http/surfaceErrors.js";

/**
 * The app's last handlers (src/http/surfaceErrors.ts): an error that escaped its surface's own
 * translator, or a path nobody serves, is answered in the surface's shape and never with a stack
 * trace — in development too, where Express's default handler would print one.
 */
describe("the final error handler", () => {
  const app = express();
  app.set("env", "development");
  app.use(requestContext());
  for (const prefix of ["/scim/v2", "/admin/api", "/admin", "/other"]) {
    app.get(`${prefix}/boom`, () => {
      throw new Error("secret internals at /srv/app/src/x.ts:1:2");
    });
    app.get(`${prefix}/bad`, () => {
      throw Object.assign(new Error("client mistake"), { status: 400 });
    });
  }
  app.use(notFound);
  app.use(finalErrorHandler);

  it.each([
    ["/scim/v2/boom", 500, /^application\/scim\+json/, /"detail":"Internal server error"/],
    ["/scim/v2/bad", 400, /^application\/scim\+json/, /"scimType":"invalidSyntax"/],
    ["/admin/api/boom", 500, /^application\/json/, /"error":"InternalError"/],
    ["/admin/boom", 500, /^text\/html/, /Something went wrong/],
    ["/admin/missing", 404, /^text\/html/, /Not found/],
    ["/other/boom", 500, /^application\/json/, /"error":"InternalError"/],
    ["/missing", 404, /^application\/json/, /"error":"NotFound"/],
  ])("%s → %i in the surface's shape, no stack", async (path, status, type, body) => {
    const res = await request(app).get(path);
    expect(res.status).toBe(status);
    expect(res.headers["content-type"]).toMatch(type);
    expect(res.text).toMatch(body);
    expect(res.text).not.toMatch(/\n\s+at |secret internals|client mistake/);
  });
});

import { once } from "node:events";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { serverClasses } from "../../src/http/serverClasses.js";

/**
 * Requests and responses are born with the Express app's prototypes, so Express's per-request
 * prototype swap (a V8 deoptimisation, docs/performance.md) has nothing to do, and the app behaves
 * as on node's own classes.
 */
describe("server classes born with the app's prototypes", () => {
  let server: http.Server | undefined;
  afterEach(() => server?.close());

  it("hands every request and response to Express already on the app's prototypes", async () => {
    const classes = serverClasses();
    expect(classes).toBeDefined(); // Node 20 and 22 keep IncomingMessage and ServerResponse as functions
    const app = express();
    app.get("/hello/:name", (req, res) => {
      res.status(201).json({ name: req.params.name, q: req.query.q, host: req.get("host") !== undefined });
    });
    const born: { request: boolean; response: boolean }[] = [];
    server = http.createServer({ IncomingMessage: classes!.IncomingMessage, ServerResponse: classes!.ServerResponse });
    classes!.adopt(app);
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      born.push({
        request: Object.getPrototypeOf(req) === app.request,
        response: Object.getPrototypeOf(res) === app.response,
      });
      app(req, res);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;

    for (let i = 0; i < 2; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/hello/ann?q=${i}`);
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ name: "ann", q: String(i), host: true });
    }
    expect(born).toEqual([
      { request: true, response: true },
      { request: true, response: true },
    ]);
  });
});

import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  ADMIN_TOKEN,
  csrfFrom,
  sessionCookie,
  sessionIdOf,
  signInLocally,
  startAdminHarness,
  type AdminHarness,
} from "../support/adminHarness.js";

describe("admin UI in local mode (ADMIN_TOKEN sign-in)", () => {
  let h: AdminHarness;
  beforeAll(async () => {
    h = await startAdminHarness();
  });
  afterAll(async () => {
    await h?.database.drop();
  });

  it("sends visitors without a session to the sign-in page", async () => {
    const res = await request(h.app).get("/admin");
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe("/admin/login");
  });

  it("every page and action under /admin needs a session; sign-in and assets do not", async () => {
    for (const path of [
      "/admin",
      "/admin/log",
      "/admin/log/1",
      "/admin/log/export.csv",
      "/admin/users",
      "/admin/users/x",
      "/admin/mapping",
      "/admin/approvals",
      "/admin/runs",
      "/admin/mirror",
      "/admin/nope",
    ]) {
      const res = await request(h.app).get(path);
      expect([path, res.status, res.headers.location]).toEqual([path, 303, "/admin/login"]);
    }
    for (const path of [
      "/admin/approvals/approve",
      "/admin/users/x/reconcile",
      "/admin/runs/resync",
      "/admin/mapping/preview",
    ]) {
      // Refused by the session check, before any form body is read.
      const res = await request(h.app).post(path).type("form").send({ id: "x" });
      expect([path, res.status]).toEqual([path, 401]);
    }
    expect(h.calls).toEqual([]);
    expect((await request(h.app).get("/admin/login")).status).toBe(200);
    const css = await request(h.app).get("/admin/assets/admin.css");
    expect(css.status).toBe(200);
    expect(css.headers["content-type"]).toMatch(/text\/css/);
  });

  it("refuses a wrong token with a clear page and no session", async () => {
    const agent = request.agent(h.app);
    const res = await signInLocally(agent, "wrong-token-wrong-token");
    expect(res.status).toBe(401);
    expect(res.text).toContain("That token is not right.");
    expect((await agent.get("/admin")).status).toBe(303);
  });

  it("refuses a sign-in form posted without its CSRF token", async () => {
    const agent = request.agent(h.app);
    await agent.get("/admin/login");
    const res = await agent.post("/admin/login").type("form").send({ token: ADMIN_TOKEN });
    expect(res.status).toBe(403);
    expect((await agent.get("/admin")).status).toBe(303);
  });

  it("signs in with ADMIN_TOKEN under a new session id, with safe cookie attributes", async () => {
    const agent = request.agent(h.app);
    const before = sessionCookie(await agent.get("/admin/login"));
    const res = await signInLocally(agent);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe("/admin");
    const after = sessionCookie(res)!;
    expect(after).toBeDefined();
    expect(after.split(";")[0]).not.toBe(before?.split(";")[0]);
    expect(after).toMatch(/HttpOnly/i);
    expect(after).toMatch(/SameSite=Lax/i);
    expect(after).toMatch(/Path=\/admin/);
    expect(after).not.toMatch(/Secure/i); // plain HTTP here; see the TLS test

    const overview = await agent.get("/admin");
    expect(overview.status).toBe(200);
    expect(overview.text).toContain("Overview");
    expect(overview.text).toContain("local admin");
    const rows: { n: number }[] = await h.database.db.query(
      `SELECT count(*)::int AS n FROM admin_sessions WHERE sess->'actor'->>'role' = 'admin'`,
    );
    expect(rows[0]!.n).toBeGreaterThan(0);
  });

  it("marks the cookie Secure when the request came over TLS through a trusted proxy", async () => {
    const page = await request(h.app).get("/admin/login").set("X-Forwarded-Proto", "https");
    expect(sessionCookie(page)).toMatch(/Secure/i);
  });

  it("sends strict security headers: CSP without scripts, no framing", async () => {
    const res = await request(h.app).get("/admin/login");
    const csp = String(res.headers["content-security-policy"]);
    expect(csp).toContain("script-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.text).not.toMatch(/<script/i);
  });

  it("a request without a valid CSRF token changes nothing", async () => {
    const agent = request.agent(h.app);
    await signInLocally(agent);
    const missing = await agent.post("/admin/users/u-1/reconcile").type("form").send({});
    const wrong = await agent.post("/admin/users/u-1/reconcile").type("form").send({ _csrf: "forged" });
    const approve = await agent.post("/admin/approvals/approve").type("form").send({ all: "1" });
    expect([missing.status, wrong.status, approve.status]).toEqual([403, 403, 403]);
    expect(missing.text).toContain("Nothing was changed");
    expect(h.calls).toEqual([]);

    const csrf = csrfFrom((await agent.get("/admin")).text);
    const ok = await agent.post("/admin/users/u-1/reconcile").type("form").send({ _csrf: csrf });
    expect(ok.status).toBe(303);
    expect(h.calls).toEqual([
      { action: "reconcileNow", args: ["u-1"], actor: { name: "local admin", role: "admin", via: "local" } },
    ]);
    const back = await agent.get(ok.headers.location!);
    expect(back.status).toBe(200); // the sample user's page, with the action's confirmation
    expect(back.text).toContain("reconcileNow done");
    h.calls.length = 0;
  });

  it("a forged sign-out (no CSRF token) does not end the session; a real one does", async () => {
    const agent = request.agent(h.app);
    await signInLocally(agent);
    expect((await agent.post("/admin/logout").type("form").send({})).status).toBe(403);
    const page = await agent.get("/admin");
    expect(page.status).toBe(200);
    const out = await agent
      .post("/admin/logout")
      .type("form")
      .send({ _csrf: csrfFrom(page.text) });
    expect(out.status).toBe(303);
    expect((await agent.get("/admin")).status).toBe(303);
  });

  it("moves the idle deadline forward on activity (rolling)", async () => {
    const agent = request.agent(h.app);
    const res = await signInLocally(agent);
    const sid = sessionIdOf(res);
    const deadline = async () =>
      (
        (await h.database.db.query(`SELECT expires_at FROM admin_sessions WHERE sid = $1`, [sid])) as {
          expires_at: Date;
        }[]
      )[0]!.expires_at.getTime();
    expect((await deadline()) - Date.now()).toBeGreaterThan(29 * 60_000); // ADMIN_SESSION_IDLE_MINUTES default 30
    // A minute of idleness, without waiting for it: the stored deadline is a minute earlier.
    await h.database.db.query(
      `UPDATE admin_sessions SET expires_at = expires_at - interval '1 minute' WHERE sid = $1`,
      [sid],
    );
    const first = await deadline();
    expect((await agent.get("/admin")).status).toBe(200);
    expect(await deadline()).toBeGreaterThan(first);
  });

  it("ends a session after the idle timeout", async () => {
    const agent = request.agent(h.app);
    await signInLocally(agent);
    expect((await agent.get("/admin")).status).toBe(200);
    await h.database.db.query(`UPDATE admin_sessions SET expires_at = now() - interval '1 second'`);
    expect((await agent.get("/admin")).status).toBe(303);
  });

  it("ends a busy session at its absolute lifetime (ADMIN_SESSION_MAX_AGE_HOURS, default 12 h) however recent its activity", async () => {
    const agent = request.agent(h.app);
    const res = await signInLocally(agent);
    const sid = sessionIdOf(res);
    const row = async () =>
      (
        (await h.database.db.query(`SELECT sess, expires_at FROM admin_sessions WHERE sid = $1`, [sid])) as {
          sess: { signedInAt?: number };
          expires_at: Date;
        }[]
      )[0];
    const signedInAt = (await row())!.sess.signedInAt!;
    expect(Math.abs(signedInAt - Date.now())).toBeLessThan(60_000);
    expect((await agent.get("/admin")).status).toBe(200);
    // Signed in 11 h 59 min ago, active just now: still in.
    await h.database.db.query(
      `UPDATE admin_sessions SET sess = jsonb_set(sess, '{signedInAt}', to_jsonb($2::bigint)) WHERE sid = $1`,
      [sid, Date.now() - (12 * 60 - 1) * 60_000],
    );
    expect((await agent.get("/admin")).status).toBe(200);
    // The row's deadline is capped by the absolute one (about a minute away), not the 30-minute idle one.
    expect((await row())!.expires_at.getTime() - Date.now()).toBeLessThan(2 * 60_000);
    // Signed in 12 h ago: out, though the idle deadline is far away, and the row is gone.
    await h.database.db.query(
      `UPDATE admin_sessions SET sess = jsonb_set(sess, '{signedInAt}', to_jsonb($2::bigint)), expires_at = now() + interval '30 minutes' WHERE sid = $1`,
      [sid, Date.now() - 12 * 3_600_000],
    );
    expect((await agent.get("/admin")).status).toBe(303);
    await vi.waitFor(async () => expect(await row()).toBeUndefined());
  });

  it("answers an action only once its flash message is stored, so the page it redirects to shows it", async () => {
    const server = h.app.listen(0, "127.0.0.1");
    await once(server, "listening");
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const agent = request.agent(url);
      const signedIn = await signInLocally(agent);
      const cookie = sessionCookie(signedIn)!.split(";")[0]!;
      const sid = sessionIdOf(signedIn);
      const csrf = csrfFrom((await agent.get("/admin/runs")).text);

      // The session's row is locked, so storing the flash waits; the action's answer must wait with it.
      const answered = await h.database.db.session(async (locker) => {
        await locker.query("BEGIN");
        await locker.query(`SELECT 1 FROM admin_sessions WHERE sid = $1 FOR UPDATE`, [sid]);
        let headersArrived = false;
        const action = new Promise<http.IncomingMessage>((resolve, reject) => {
          const req = http.request(
            `${url}/admin/runs/resync`,
            { method: "POST", headers: { cookie, "content-type": "application/x-www-form-urlencoded" } },
            (res) => {
              headersArrived = true;
              res.resume();
              resolve(res);
            },
          );
          req.on("error", reject);
          req.end(new URLSearchParams({ _csrf: csrf }).toString());
        });
        await vi.waitFor(
          async () => {
            const waiting: unknown[] = await h.database.db.query(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO admin_sessions%'`,
            );
            expect(waiting).toHaveLength(1);
          },
          { timeout: 10_000, interval: 20 },
        );
        // Had the head been written before the save, it was on this socket before the save was seen waiting.
        await new Promise((resolve) => setImmediate(resolve));
        expect(headersArrived).toBe(false);
        await locker.query("COMMIT");
        return action;
      });
      expect(answered.statusCode).toBe(303);
      const landed = await agent.get(answered.headers.location!);
      expect(landed.text).toContain("startResync done");
    } finally {
      server.close();
    }
  });

  it("sends a page only once the CSRF token in its forms is stored, so a form posted at once is accepted", async () => {
    const server = h.app.listen(0, "127.0.0.1");
    await once(server, "listening");
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const agent = request.agent(url);
      // A fresh signed-in session (a new id, no token yet): its first page makes the token.
      const signedIn = await signInLocally(agent);
      const cookie = sessionCookie(signedIn)!.split(";")[0]!;
      const page = await h.database.db.session(async (locker) => {
        // The session's row is locked, so storing the new token waits; the page must wait with it.
        await locker.query("BEGIN");
        await locker.query(`SELECT 1 FROM admin_sessions WHERE sid = $1 FOR UPDATE`, [sessionIdOf(signedIn)]);
        let headersArrived = false;
        const answer = new Promise<string>((resolve, reject) => {
          const req = http.get(`${url}/admin/runs`, { headers: { cookie } }, (res) => {
            headersArrived = true;
            let body = "";
            res.setEncoding("utf8");
            res.on("data", (chunk: string) => (body += chunk));
            res.on("end", () => resolve(body));
          });
          req.on("error", reject);
        });
        await vi.waitFor(
          async () => {
            const waiting: unknown[] = await h.database.db.query(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO admin_sessions%'`,
            );
            expect(waiting).toHaveLength(1);
          },
          { timeout: 10_000, interval: 20 },
        );
        // Had the page been written before the save, it was on this socket before the save was seen waiting.
        await new Promise((resolve) => setImmediate(resolve));
        expect(headersArrived).toBe(false);
        await locker.query("COMMIT");
        return answer;
      });
      const posted = await agent
        .post("/admin/runs/resync")
        .type("form")
        .send({ _csrf: csrfFrom(page) });
      expect(posted.status).toBe(303);
    } finally {
      server.close();
    }
  });
});

describe("local mode behind a reverse proxy on the same host", () => {
  let strict: AdminHarness;
  let remoteAllowed: AdminHarness;
  beforeAll(async () => {
    strict = await startAdminHarness();
    remoteAllowed = await startAdminHarness({ ADMIN_ALLOW_REMOTE: "true" });
  });
  afterAll(async () => {
    await strict?.database.drop();
    await remoteAllowed?.database.drop();
  });

  const proxied: [string, string][] = [
    ["X-Forwarded-For", "203.0.113.9"],
    ["Forwarded", "for=203.0.113.9;proto=https"],
    ["X-Real-IP", "203.0.113.9"],
  ];

  it.each(proxied)(
    "refuses the sign-in page and the sign-in post forwarded with %s (the socket is loopback)",
    async (header, value) => {
      const page = await request(strict.app).get("/admin/login").set(header, value);
      expect(page.status).toBe(403);
      expect(page.text).toContain("Not available remotely");
      const post = await request(strict.app)
        .post("/admin/login")
        .set(header, value)
        .type("form")
        .send({ token: ADMIN_TOKEN });
      expect(post.status).toBe(403);
      expect(sessionCookie(post)).toBeUndefined();
      // A direct visitor on this machine is still served.
      expect((await request(strict.app).get("/admin/login")).status).toBe(200);
    },
  );

  it("serves proxied visitors when ADMIN_ALLOW_REMOTE is set", async () => {
    const agent = request.agent(remoteAllowed.app);
    const page = await agent.get("/admin/login").set("X-Forwarded-For", "203.0.113.9");
    expect(page.status).toBe(200);
    const post = await agent
      .post("/admin/login")
      .set("X-Forwarded-For", "203.0.113.9")
      .type("form")
      .send({ _csrf: csrfFrom(page.text), token: ADMIN_TOKEN });
    expect(post.status).toBe(303);
  });
});

import { generateKeyPairSync } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccessReport, type AccessReport } from "../../src/review/access/index.js";
import { csrfFrom, signInLocally, startAdminHarness, type AdminHarness } from "../support/adminHarness.js";
import { DesiredAccess } from "../../src/mapping/desiredAccess.js";

/**
 * The Access review page's evidence pack is a POST with the CSRF token, one pack per admin at a
 * time (issue 34, finding 8): as a CSRF-exempt GET, any page a signed-in admin visited could make
 * their browser write packs over the whole log, six at once all ran. The JSON API (bearer only,
 * no cookie) keeps its GET.
 */
describe("the evidence pack download from the admin UI", () => {
  let h: AdminHarness;
  let agent: request.Agent;
  let csrf: string;
  let report: AccessReport | undefined;
  const window = { from: "2026-01-01", to: "2026-01-31" };
  const binary = (req: request.Test) =>
    req.buffer(true).parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => done(null, Buffer.concat(chunks)));
    });

  beforeAll(async () => {
    const { privateKey } = generateKeyPairSync("ed25519");
    // The real access report (for the page's form), over the harness's own database, made once that exists.
    h = await startAdminHarness(
      { EVIDENCE_SIGNING_KEY: privateKey.export({ format: "pem", type: "pkcs8" }).toString() },
      {
        access: {
          page: (...args) => report!.page(...args),
          rows: (...args) => report!.rows(...args),
          totals: (...args) => report!.totals(...args),
          differences: () => report!.differences(),
          export: (...args) => report!.export(...args),
        },
      },
    );
    report = createAccessReport({ db: h.database.db, desired: DesiredAccess.recordedOnly(undefined) });
    agent = request.agent(h.app);
    await signInLocally(agent);
    csrf = csrfFrom((await agent.get("/admin/access")).text);
  });
  afterAll(async () => {
    await h?.database.drop();
  });

  it("a GET from a link or another site's page writes no pack, nor does a POST without the CSRF token", async () => {
    const viaGet = await binary(agent.get(`/admin/access/evidence?from=${window.from}&to=${window.to}`));
    expect(viaGet.status).toBe(405);
    expect(viaGet.headers["content-type"]).not.toMatch(/x-tar/);
    const forged = await agent.post("/admin/access/evidence").type("form").send(window);
    expect(forged.status).toBe(403);
    const page = await agent.get("/admin/access");
    expect(page.text).toMatch(
      /<form method="post" action="\/admin\/access\/evidence"[^>]*>\s*<input type="hidden" name="_csrf"/,
    );
    const pack = await binary(
      agent
        .post("/admin/access/evidence")
        .type("form")
        .send({ ...window, _csrf: csrf }),
    );
    expect(pack.status).toBe(200);
    expect(pack.headers["content-disposition"]).toMatch(/^attachment; filename="evidence-2026-01-01-2026-02-01\.tar"/);
  });

  it("a second pack for the same admin while one is being written answers 429 with Retry-After", async () => {
    let release!: () => void;
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // Holding the chains' heads makes the first pack wait on its chain check: the second comes meanwhile.
    const holding = h.database.db.transaction(async (tx) => {
      await tx.query("LOCK TABLE audit_chains IN ACCESS EXCLUSIVE MODE");
      locked();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await isLocked;
    const first = binary(
      agent
        .post("/admin/access/evidence")
        .type("form")
        .send({ ...window, _csrf: csrf }),
    );
    const waiting = async () =>
      (
        await h.database.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
        )
      )[0]!.n;
    const firstRequest = first.then((r) => r);
    for (let i = 0; i < 200 && (await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await waiting()).toBeGreaterThan(0);
    const second = agent
      .post("/admin/access/evidence")
      .type("form")
      .send({ ...window, _csrf: csrf });
    const timeout = new Promise<"still waiting">((r) => setTimeout(() => r("still waiting"), 3_000));
    const answered = await Promise.race([second, timeout]);
    release();
    await holding;
    expect(answered).not.toBe("still waiting");
    const refused = answered as request.Response;
    expect(refused.status).toBe(429);
    expect(refused.headers["retry-after"]).toBe("30");
    expect((await firstRequest).status).toBe(200);
    // The first done, the next pack is written.
    expect(
      (
        await binary(
          agent
            .post("/admin/access/evidence")
            .type("form")
            .send({ ...window, _csrf: csrf }),
        )
      ).status,
    ).toBe(200);
    await second;
  });
});

import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccessReport, type AccessReport } from "../../src/review/access/index.js";
import { csrfFrom, signInLocally, startAdminHarness, type AdminHarness } from "../support/adminHarness.js";
import { DesiredAccess } from "../../src/mapping/desiredAccess.js";

/**
 * The Access review page's "Evidence pack" form without EVIDENCE_SIGNING_KEY: the page says what
 * to set instead of offering a button that can only fail, and the download answers 409 naming the
 * setting. (With a key, the download and its verification: test/campaigns/pages.test.ts.)
 */
describe("the evidence pack button without a signing key", () => {
  let h: AdminHarness;
  let agent: request.Agent;
  let report: AccessReport | undefined;
  beforeAll(async () => {
    // The real access report, over the harness's own (empty) database, made once that exists.
    h = await startAdminHarness(
      {},
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
  });
  afterAll(async () => {
    await h?.database.drop();
  });

  it("the page names EVIDENCE_SIGNING_KEY instead of the button, and the download answers 409 saying so", async () => {
    const page = await agent.get("/admin/access");
    expect(page.status).toBe(200);
    expect(page.text).toContain("Evidence pack");
    expect(page.text).toContain("set EVIDENCE_SIGNING_KEY");
    expect(page.text).not.toContain("Download the evidence pack");
    const download = await agent
      .post("/admin/access/evidence")
      .type("form")
      .send({ _csrf: csrfFrom(page.text), from: "2026-01-01", to: "2026-01-31" });
    expect(download.status).toBe(409);
    expect(download.text).toContain("Evidence packs need EVIDENCE_SIGNING_KEY");
  });
});

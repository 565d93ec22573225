import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleSources } from "../support/sampleData.js";
import { csrfFrom, signInLocally, startAdminHarness, type AdminHarness } from "../support/adminHarness.js";

/**
 * Page wiring on canned data (test/support/sampleData.ts): what each page renders and which action a
 * button calls. The real sources (the mapping page says to edit the file, the log export honours
 * its filter) are tested in data.test.ts.
 */
describe("admin UI pages with data", () => {
  let h: AdminHarness;
  let agent: request.Agent;
  beforeAll(async () => {
    h = await startAdminHarness({}, sampleSources());
    agent = request.agent(h.app);
    await signInLocally(agent);
  });
  afterAll(async () => {
    await h?.database.drop();
  });

  it.each([
    ["/admin", "of 5,000 calls used (25%)"],
    ["/admin/log?outcome=failed&page=1", "cy@example.com"],
    ["/admin/log/1", "workspaces.Product[write]"],
    ["/admin/users?q=ada", "ada@example.com"],
    ["/admin/users/u-1", "Reconcile now"],
    ["/admin/mapping", "engineers"],
    ["/admin/approvals", "Approve selected"],
    ["/admin/runs", "Start a full resync now"],
    ["/admin/mirror", "400 invalid email"],
  ])("%s renders", async (path, text) => {
    const res = await agent.get(path);
    expect(res.status).toBe(200);
    expect(res.text).toContain(text);
    expect(res.text).toContain('aria-current="page"');
  });

  it("unknown ids are a 404 page", async () => {
    expect((await agent.get("/admin/log/nope")).status).toBe(404);
    expect((await agent.get("/admin/users/nope")).status).toBe(404);
  });

  it("escapes what it shows", async () => {
    const csrf = csrfFrom((await agent.get("/admin/mapping")).text);
    const res = await agent
      .post("/admin/mapping/preview")
      .type("form")
      .send({ _csrf: csrf, draft: "</textarea><script>alert(1)</script>" });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain("<script>");
    expect(res.text).toContain("&lt;/textarea>&lt;script>");
  });

  it("the mapping page shows a draft's problems or its preview, and how to apply it (canned data)", async () => {
    const csrf = csrfFrom((await agent.get("/admin/mapping")).text);
    const bad = await agent.post("/admin/mapping/preview").type("form").send({ _csrf: csrf, draft: "bad" });
    expect(bad.text).toContain("rules[0].group: is required");
    expect(bad.text).not.toContain("editing MAPPING_FILE");
    const good = await agent.post("/admin/mapping/preview").type("form").send({ _csrf: csrf, draft: "rules: []" });
    expect(good.text).toContain("workspace Product: admin");
    expect(good.text).toContain("Mappings are applied by editing MAPPING_FILE.");
    expect(h.calls).toEqual([]);
  });

  it("the log export links answer CSV and JSON downloads with their headers and columns (canned data, unfiltered)", async () => {
    const csv = await agent.get("/admin/log/export.csv?action=update");
    expect(csv.status).toBe(200);
    expect(csv.headers["content-type"]).toMatch(/text\/csv/);
    expect(csv.headers["content-disposition"]).toMatch(/attachment; filename="reconciliation-log-.*\.csv"/);
    expect(csv.text.split("\r\n")[0]).toBe("id,at,userName,action,outcome,trigger,platformStatus,callsSpent,actor");
    expect(csv.text).toContain(
      '"1","2026-11-20T09:15:00.000Z","ada@example.com","update","succeeded","added to group Engineering","200","1",""',
    );
    const json = await agent.get("/admin/log/export.json");
    expect(JSON.parse(json.text)).toHaveLength(3);
  });
});

import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { createAdminData } from "../../src/admin/index.js";
import { createResyncs } from "../../src/admin/runs/resyncs.js";
import type { AdminDataSources } from "../../src/http/admin/index.js";
import { DRAFT_MAPPING } from "../support/mapping.js";
import {
  ADMIN_TOKEN,
  emulatorState,
  emulatorStats,
  idp,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";
import { eventually } from "../support/wait.js";
import { runCli } from "../support/cli.js";
import { csrfFrom, signInLocally } from "../support/adminHarness.js";

/**
 * The admin UI's data sources and actions over a real stack: users pushed through the SCIM API,
 * reconciled against the emulator over HTTP, read back through the pages and the sources.
 */

describe("admin data sources against the reconciler and the emulator", () => {
  let stack: Stack;
  let sources: AdminDataSources;
  let agent: request.Agent;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    // A breaker that holds any wave of two or more deprovisions, so the approvals have work.
    stack = await startStack({ env: { DEPROVISION_BREAKER_MIN: "1", DEPROVISION_BREAKER_PERCENT: "0" } });
    const scim = idp(stack);
    for (const name of ["ann", "bob", "cat", "dan", "eve"]) ids[name] = await scim.createUser(`${name}@example.com`);
    await scim.createGroup("Marketing", [ids.ann!, ids.bob!, ids.cat!, ids.dan!]);
    await scim.createGroup("Platform Admins", [ids.eve!]);
    await waitForQueueIdle(stack);
    await eventually("five dashboard users", async () => (await emulatorState(stack)).dashboardUsers.length === 5, {
      timeoutMs: 20_000,
    });
    const reconciliation = stack.service.reconciliation!;
    sources = createAdminData({
      db: stack.service.db,
      clock: systemClock,
      budget: reconciliation.budget,
      desired: stack.service.desired,
      mappingFile: stack.mappingFile,
      reconcileNow: (userId, actor) => reconciliation.worker.reconcileNow(userId, actor),
      resync: createResyncs({
        job: {
          db: stack.service.db,
          clock: systemClock,
          desired: stack.service.desired,
          policies: { onEmailChange: "hold" },
        },
        budget: reconciliation.budget,
        cron: "off",
        verify: false,
      }),
      quarantine: stack.service.quarantine,
      notifications: stack.service.notifications,
    }).sources;
    agent = request.agent(stack.service.url);
    await signInLocally(agent);
  });
  afterAll(async () => stack?.close());

  const csrf = async (path = "/admin/mapping") => csrfFrom((await agent.get(path)).text);
  const onPlatform = async (userName: string) =>
    (await emulatorState(stack)).dashboardUsers.some((u) => u.userName === userName);

  it("the overview counts today's calls by action and finds nothing to worry about", async () => {
    const overview = await sources.overview!();
    expect(overview.budget).toMatchObject({ used: 5, limit: 5000, reserve: 500 });
    expect(overview.callsPerDay).toHaveLength(14);
    expect(overview.callsPerDay.at(-1)!.byAction).toEqual({ create: 5 });
    expect(overview.failures).toEqual([]);
    expect(overview.held).toEqual({ deprovisions: 0, emailChanges: 0 });
    expect(overview.queue).toEqual([]);
    expect(overview.mirrorLag?.length).toBe(3);
    const page = await agent.get("/admin");
    expect(page.text).toContain("of 5,000 calls used (0%)");
  });

  it("the log filters and pages, and an entry shows its permissions and its platform request", async () => {
    const creates = { action: "create", page: 1 };
    const first = await sources.log!(creates, 2, 0);
    expect(first.rows).toHaveLength(2);
    expect(first.hasNext).toBe(true);
    const last = await sources.log!(creates, 2, 4);
    expect(last.rows).toHaveLength(1);
    expect(last.hasNext).toBe(false);
    const ann = await sources.log!({ user: "ANN@", page: 1 }, 50, 0);
    expect(ann.rows.map((r) => [r.userName, r.action, r.outcome, r.platformStatus, r.callsSpent])).toEqual([
      ["ann@example.com", "create", "succeeded", 201, 1],
    ]);
    expect(ann.rows[0]!.trigger).toMatch(/^(created by the IdP|added to group Marketing)$/);
    expect((await sources.log!({ trigger: "mapping", page: 1 }, 50, 0)).rows).toEqual([]);
    expect((await sources.log!({ from: "2100-01-01T00:00", page: 1 }, 50, 0)).rows).toEqual([]);
    expect((await sources.logExport!({ outcome: "succeeded", page: 1 })).length).toBe(5);

    const entry = (await sources.logEntry!(ann.rows[0]!.id))!;
    expect(entry.platformCall).toEqual({ method: "POST", path: "/scim/v2/Users", status: 201 });
    expect(entry.before).toBeUndefined();
    expect(entry.after).toMatchObject({
      department: "marketing",
      workspaces: { "EU Production": { teams: { Lifecycle: ["basic_access"] } } },
    });
    const page = await agent.get(`/admin/log/${ann.rows[0]!.id}`);
    expect(page.text).toContain("POST /scim/v2/Users");
    expect(page.text).toContain("workspaces.EU Production.permissions[send_campaigns_canvases]");
    const csv = await agent.get("/admin/log/export.csv?action=create");
    expect(csv.text.trim().split("\n")).toHaveLength(6); // a header and the five creates
    expect(csv.text).toContain("ann@example.com");
    expect((await agent.get("/admin/log?from=yesterday")).status).toBe(400);
    expect((await agent.get("/admin/log/99999999999999999999")).status).toBe(404);
  });

  it("a user's page goes from IdP groups through the rules to the desired and applied user", async () => {
    const found = await sources.users!({ q: "an", page: 1 }, 50, 0);
    expect(found.rows.map((r) => [r.userName, r.groups, r.state])).toEqual([["ann@example.com", 1, "on the platform"]]);
    const user = (await sources.user!(ids.ann!))!;
    expect(user.groups).toEqual(["Marketing"]);
    expect(user.matchedRules).toEqual([
      {
        rule: 'Rule 2 (line 9) — group "Marketing" by name',
        grants:
          "department marketing; EU Production: basic_access, send_campaigns_canvases; team EU Production/Lifecycle: basic_access",
      },
    ]);
    expect(user.desired).toEqual(user.lastApplied);
    expect(user.log.map((l) => l.action)).toEqual(["create"]);
    expect(await sources.user!("not-a-uuid")).toBeUndefined();
    expect((await agent.get(`/admin/users/${ids.ann}`)).text).toContain("Reconcile now");
  });

  it("a mapping preview lists who gains and loses what, and changes nothing in the database or on the emulator", async () => {
    const snapshot = async () => ({
      db: await stack.service.db.query(
        `SELECT (SELECT count(*)::int FROM reconcile_queue) AS queue, (SELECT count(*)::int FROM reconcile_log) AS log,
                (SELECT count(*)::int FROM budget_debits) AS debits, (SELECT hash FROM mapping_state) AS mapping,
                (SELECT json_agg(json_build_object('u', user_id, 'a', last_applied) ORDER BY user_id) FROM platform_accounts) AS accounts`,
      ),
      emulator: { ...(await emulatorState(stack)), now: undefined }, // the emulator's clock moves on
      requests: (await emulatorStats(stack)).requests,
      mapping: stack.service.mappings.sourceText(),
    });
    const before = await snapshot();

    const preview = await sources.previewMapping!(DRAFT_MAPPING);
    expect(preview.errors).toEqual([]);
    expect(preview.usersAffected).toBe(5);
    expect(preview.estimatedCalls).toBe(5);
    expect(preview.durationLabel).toMatch(/^fits in today's remaining budget/);
    expect(preview.changes.find((c) => c.userName === "ann@example.com")).toEqual({
      userName: "ann@example.com",
      gains: [],
      losses: ["workspace EU Production: send_campaigns_canvases"],
    });
    expect(preview.changes.find((c) => c.userName === "eve@example.com")?.gains).toEqual([
      "company: manage_company_settings",
    ]);

    const page = await agent
      .post("/admin/mapping/preview")
      .type("form")
      .send({ _csrf: await csrf(), draft: DRAFT_MAPPING });
    expect(page.status).toBe(200);
    expect(page.text).toContain("− workspace EU Production: send_campaigns_canvases");
    expect(page.text).toContain("editing MAPPING_FILE");
    // The same draft uploaded as a file (multipart) previews the same; without the CSRF field it is refused.
    const uploaded = await agent
      .post("/admin/mapping/preview")
      .field("_csrf", await csrf())
      .field("draft", "")
      .attach("draftFile", Buffer.from(DRAFT_MAPPING), "mapping.yaml");
    expect(uploaded.status).toBe(200);
    expect(uploaded.text).toContain("− workspace EU Production: send_campaigns_canvases");
    const forged = await agent
      .post("/admin/mapping/preview")
      .attach("draftFile", Buffer.from(DRAFT_MAPPING), "mapping.yaml");
    expect(forged.status).toBe(403);
    const tooLarge = await agent
      .post("/admin/mapping/preview")
      .field("_csrf", await csrf())
      .attach("draftFile", Buffer.alloc(1_100_000, "a"), "big.yaml");
    expect(tooLarge.status).toBe(413);

    const broken = await sources.previewMapping!(
      DRAFT_MAPPING.replace("companyPermissions: [admin,", "companyPermissions: [admn,"),
    );
    expect(broken.errors.join("\n")).toMatch(/^draft:\d+:\d+: .*admn/m);

    expect(await snapshot()).toEqual(before);
  });

  it("reconcile now, from the user's page, is logged with who asked even when nothing needed changing", async () => {
    const res = await agent
      .post(`/admin/users/${ids.ann}/reconcile`)
      .type("form")
      .send({ _csrf: await csrf(`/admin/users/${ids.ann}`) });
    expect(res.status).toBe(303);
    const page = await agent.get(res.headers.location!);
    expect(page.text).toContain("Reconciled ann@example.com");
    const receipt = (await sources.log!({ action: "reconcile-now", page: 1 }, 50, 0)).rows;
    expect(receipt.map((r) => [r.userName, r.outcome, r.actor, r.callsSpent])).toEqual([
      ["ann@example.com", "succeeded", "local admin", 0],
    ]);
    const api = await request(stack.service.url)
      .post(`/admin/api/users/${ids.eve}/reconcile`)
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(api.body).toEqual({ result: { kind: "done" } });
    const apiReceipt = (await sources.log!({ action: "reconcile-now", user: "eve@example.com", page: 1 }, 50, 0)).rows;
    expect(apiReceipt.map((r) => [r.outcome, r.actor])).toEqual([["succeeded", "admin-api"]]);
    const unknown = await agent
      .post("/admin/users/00000000-0000-4000-8000-000000000000/reconcile")
      .type("form")
      .send({ _csrf: await csrf() });
    expect((await agent.get(unknown.headers.location!)).text).toContain("There is no user with that id");
  });

  it("approving a held deprovision in the UI releases it, and the emulator loses that account", async () => {
    const scim = idp(stack);
    await Promise.all(
      ["bob", "cat", "dan"].map((n) => scim.patch(`/Users/${ids[n]}`, [{ op: "replace", value: { active: false } }])),
    );
    await waitForQueueIdle(stack);
    const held = (await sources.approvals!()).held;
    expect(held.length).toBeGreaterThanOrEqual(2); // the first of the wave may go through before the breaker counts the rest
    expect(held.every((h) => h.kind === "deprovision")).toBe(true);
    const [approved, ...rest] = held;
    expect((await sources.overview!()).held.deprovisions).toBe(held.length);

    const page = await agent.get("/admin/approvals");
    expect(page.text).toContain(approved!.userName);
    const res = await agent
      .post("/admin/approvals/approve")
      .type("form")
      .send({ _csrf: csrfFrom(page.text), id: approved!.id });
    expect(res.status).toBe(303);
    expect((await agent.get("/admin/approvals")).text).toContain("Approved 1 held action.");
    await waitForQueueIdle(stack);
    await eventually(
      "the approved deprovision",
      async () => !(await emulatorState(stack)).dashboardUsers.some((u) => u.userName === approved!.userName),
      { timeoutMs: 20_000 },
    );
    const names = (await emulatorState(stack)).dashboardUsers.map((u) => u.userName);
    for (const h of rest) expect(names).toContain(h.userName);
    const decisions = (await sources.log!({ user: approved!.userName, page: 1 }, 50, 0)).rows.map((r) => [
      r.action,
      r.outcome,
      r.actor,
    ]);
    expect(decisions.slice(0, 2)).toEqual([
      ["deprovision", "succeeded", null],
      ["approve", "succeeded", "local admin"],
    ]);

    const reject = await agent
      .post("/admin/approvals/reject")
      .type("form")
      .send({ _csrf: await csrf("/admin/approvals"), all: "1" });
    expect(reject.status).toBe(303);
    expect((await agent.get("/admin/approvals")).text).toContain(`Rejected ${rest.length} held action`);
    await waitForQueueIdle(stack);
    expect((await sources.approvals!()).held).toEqual([]);
    const after = (await emulatorState(stack)).dashboardUsers.map((u) => u.userName);
    for (const h of rest) expect(after).toContain(h.userName);

    // Deleted in the IdP, the rejected removal still stands; the user's page shows what the platform keeps.
    expect((await idp(stack).send("delete", `/Users/${rest[0]!.id}`)).status).toBe(204);
    await waitForQueueIdle(stack);
    const gone = (await sources.user!(rest[0]!.id))!;
    expect(gone).toMatchObject({
      userName: rest[0]!.userName,
      active: false,
      idp: { deletedInTheIdp: true },
      groups: [],
      desired: undefined,
    });
    expect(gone.lastApplied).toMatchObject({ department: "marketing" });
  });

  it("an email change waits for an admin; approved, the account is re-created under the new name", async () => {
    await idp(stack).patch(`/Users/${ids.ann}`, [{ op: "replace", path: "userName", value: "ann.new@example.com" }]);
    await eventually("the email change hold", async () => (await sources.approvals!()).held.length === 1, {
      timeoutMs: 20_000,
    });
    const [hold] = (await sources.approvals!()).held;
    expect(hold).toMatchObject({ id: ids.ann, kind: "email_change", userName: "ann.new@example.com" });
    expect(hold!.summary).toContain("ann@example.com → ann.new@example.com");
    expect((await sources.overview!()).held).toEqual({ deprovisions: 0, emailChanges: 1 });

    const page = await agent.get("/admin/approvals");
    expect(page.text).toContain("email change");
    await agent
      .post("/admin/approvals/approve")
      .type("form")
      .send({ _csrf: csrfFrom(page.text), id: ids.ann });
    await eventually(
      "ann re-created under her new name",
      async () => (await onPlatform("ann.new@example.com")) && !(await onPlatform("ann@example.com")),
      { timeoutMs: 20_000 },
    );
    await waitForQueueIdle(stack);
    const user = (await sources.user!(ids.ann!))!;
    expect(user.userName).toBe("ann.new@example.com");
    expect(user.desired).toEqual(user.lastApplied);
  });

  it("a full resync started from the Runs page is listed, and logged with who started it", async () => {
    const runs = await agent.get("/admin/runs");
    expect(runs.text).toContain("Next scheduled full resync");
    const res = await agent
      .post("/admin/runs/resync")
      .type("form")
      .send({ _csrf: csrfFrom(runs.text) });
    expect(res.status).toBe(303);
    const page = await agent.get("/admin/runs");
    expect(page.text).toContain("Full resync started (run ");
    const logged = (await sources.log!({ action: "resync", page: 1 }, 50, 0)).rows;
    expect(logged.map((r) => [r.outcome, r.actor, r.trigger])).toEqual([
      ["succeeded", "local admin", "resync started by local admin"],
    ]);
    await eventually(
      "the resync's re-derivation",
      async () => {
        const rows: { status: string; phase: string }[] = await stack.service.db.query(
          `SELECT status, phase FROM resync_runs WHERE actor = 'local admin'`,
        );
        return rows.length === 1 && rows[0]!.phase !== "plan";
      },
      { timeoutMs: 20_000 },
    );
    await waitForQueueIdle(stack);
    // The run's progress is on the page: users evaluated out of the total, and the ETA column.
    const [{ n: users }] = await stack.service.db.query(`SELECT count(*)::int AS n FROM idp_users`);
    const after = await agent.get("/admin/runs");
    expect(after.text).toContain(`${users} / ${users}`);
    expect(after.text).toContain("ETA");
  });

  it("docs/reconciler.md's way to try a mapping draft, followed from its text, shows the draft's changes and changes nothing", async () => {
    const text = await readFile(path.resolve(import.meta.dirname, "../../docs/reconciler.md"), "utf8");
    const advice = /To try a mapping draft against the live data without\s+applying it, ([\s\S]*?)\n\n/.exec(text)?.[1];
    expect(advice).toBeDefined();
    const command = /`scim-connector (mapping check [^`]+)`/.exec(advice!)?.[1]?.split(" ");
    expect(command).toEqual(["mapping", "check", "draft.yaml"]);
    expect(advice!.replace(/\s+/g, " ")).toMatch(/paste it into the admin UI's _Mapping → Preview a draft_/);
    const dir = await mkdtemp(path.join(tmpdir(), "draft-"));
    const draft = path.join(dir, command![2]!);
    await writeFile(draft, DRAFT_MAPPING);
    const before = {
      stats: await emulatorStats(stack),
      mapping: await stack.service.db.query(`SELECT hash FROM mapping_state`),
    };

    const checked = await runCli(stack, [command![0]!, command![1]!, draft]);
    expect(checked, checked.stderr).toMatchObject({ code: 0 });
    const mappingPage = await agent.get("/admin/mapping");
    expect(mappingPage.text).toContain("Preview a draft");
    const preview = await agent
      .post("/admin/mapping/preview")
      .type("form")
      .send({ _csrf: csrfFrom(mappingPage.text), draft: DRAFT_MAPPING });
    expect(preview.status).toBe(200);
    expect(preview.text).toContain("ann.new@example.com"); // the active Marketing member at the file's end
    expect(preview.text).toContain("− workspace EU Production: send_campaigns_canvases");

    // What the paragraph warns of: resync --dry-run under the draft's MAPPING_FILE plans with the
    // mapping in force, so it reports none of the updates the draft would make.
    const dry = await runCli(stack, ["resync", "--dry-run"], { MAPPING_FILE: draft });
    expect(dry, dry.stderr).toMatchObject({ code: 0 });
    expect(advice! + text).toContain("`resync --dry-run` plans with the mapping in force");
    // (A deprovision still held from the approvals test may be counted; no update is: the draft's are not seen.)
    expect(dry.stdout).toMatch(/would queue \d+\./);
    expect(dry.stdout).not.toMatch(/^\s+update\s/m);

    expect({
      stats: await emulatorStats(stack),
      mapping: await stack.service.db.query(`SELECT hash FROM mapping_state`),
    }).toEqual(before);
  });
});

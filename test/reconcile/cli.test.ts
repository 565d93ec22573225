import { execFile } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { approvalsCommand, buildPlanReport, formatPlanReport } from "../../src/cli/reconcile.js";
import { adminQuery } from "../support/db.js";
import { withDatabase } from "../support/globalSetup.js";
import { adminApi, emulatorState, idp, startStack, type Stack } from "../support/stack.js";
import { ledgerDebits } from "../support/emulator.js";
import { accountsNamed, scimUsed } from "./helpers.js";

/**
 * `scim-connector plan <userName>` and `scim-connector approvals ...` against a real database,
 * as functions and through the binary. `plan` must spend nothing.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const withoutUser = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "USER"));

describe("plan and approvals CLI", () => {
  let stack: Stack;
  let annId: string;
  let analysts: string;
  const policies = { onEmailChange: "hold" as const };

  beforeAll(async () => {
    stack = await startStack({ workers: false });
    const scim = idp(stack);
    annId = await scim.createUser("ann@example.com");
    await scim.createGroup("Marketing", [annId]);
    analysts = await scim.createGroup("Analysts-EU");
  });
  afterAll(async () => stack?.close());
  afterEach(() => vi.restoreAllMocks());

  const drain = async () => {
    while (await stack.service.reconciliation!.worker.runOnce()) {
      /* until nothing is ready */
    }
  };
  const cli = async (...args: string[]) =>
    run(process.execPath, [path.join(ROOT, "bin/scim-connector.js"), ...args], {
      cwd: ROOT,
      // No $USER, as in a container or cron: the actor must still say who ran it.
      env: { ...withoutUser(), DATABASE_URL: stack.database.url, MAPPING_FILE: stack.mappingFile, LOG_LEVEL: "error" },
    });
  const plan = (userName: string) => buildPlanReport(stack.service.db, stack.service.desired, policies, userName);

  it("before the first reconcile: the desired user, nothing applied, and a create", async () => {
    const report = (await plan("ANN@example.com"))!;
    expect(report.userId).toBe(annId);
    expect(report.plan.action).toBe("create");
    expect(report.desired).toMatchObject({ userName: "ann@example.com", department: "marketing" });
    const text = formatPlanReport(report);
    expect(text).toContain("department: marketing");
    expect(text).toContain("workspace EU Production: basic_access, send_campaigns_canvases");
    expect(text).toContain("account: absent → present");
    expect(text).toContain("Action: create: 1 POST");
    expect(await scimUsed(stack)).toBe(0);
    expect(
      await buildPlanReport(stack.service.db, stack.service.desired, policies, "nobody@example.com"),
    ).toBeUndefined();
  });

  it("after it: nothing to do; after a group change: the difference and an update, with no budget spent", async () => {
    await drain();
    expect((await plan("ann@example.com"))!.plan.action).toBe("none");
    await idp(stack).patch(`/Groups/${analysts}`, [{ op: "add", path: "members", value: [{ value: annId }] }]);
    const report = (await plan("ann@example.com"))!;
    expect(report.plan.action).toBe("update");
    expect(formatPlanReport(report)).toContain("workspaces[EU Production].permissions: +export_user_data");

    const [calls, debits] = [await scimUsed(stack), await ledgerDebits(stack.database.db)];
    const { stdout } = await cli("plan", "ann@example.com");
    expect(stdout).toContain("Desired dashboard user:");
    expect(stdout).toMatch(/Last applied \(platform id [0-9a-f-]{36}, active/);
    expect(stdout).toContain("workspaces[EU Production].permissions: +export_user_data");
    expect(stdout).toContain("Action: update: 1 PUT of the complete resource");
    const json = JSON.parse((await cli("plan", "ann@example.com", "--json")).stdout);
    expect(json).toMatchObject({
      userId: annId,
      action: "update",
      changes: [{ kind: "permissions", added: ["export_user_data"] }],
    });
    expect(await scimUsed(stack)).toBe(calls);
    expect(await ledgerDebits(stack.database.db)).toBe(debits);
    await expect(cli("plan", "nobody@example.com")).rejects.toMatchObject({ code: 1 });
    await drain();
  });

  it("approvals list / approve by userName through the binary: an email change is carried out", async () => {
    await idp(stack).patch(`/Users/${annId}`, [{ op: "replace", path: "userName", value: "ann.new@example.com" }]);
    await drain();
    const report = (await plan("ann.new@example.com"))!;
    expect(report.plan.action).toBe("email-change");
    expect(report.action).toContain("held for an admin");

    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
    await approvalsCommand(stack.service.db, ["list"]);
    vi.restoreAllMocks();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(annId);
    expect(lines[0]).toContain("email change ann@example.com → ann.new@example.com");

    const { stdout } = await cli("approvals", "approve", "ann.new@example.com");
    expect(stdout).toMatch(/^Approved: /);
    await drain();
    expect(await accountsNamed(stack, "ann@example.com")).toHaveLength(0);
    expect(await accountsNamed(stack, "ann.new@example.com")).toHaveLength(1);
    const approvals = await adminApi(stack)("/log?action=approve");
    expect(approvals.body.entries[0]).toMatchObject({ userId: annId, outcome: "succeeded" });
    expect(approvals.body.entries[0].actor).toBe(`cli:${os.userInfo().username}`);
  });

  it("approvals reject all leaves the platform as it is", async () => {
    const bob = await idp(stack).createUser("bob@example.com");
    await idp(stack).patch(`/Groups/${analysts}`, [{ op: "add", path: "members", value: [{ value: bob }] }]);
    await drain();
    await idp(stack).patch(`/Users/${bob}`, [{ op: "replace", path: "userName", value: "robert@example.com" }]);
    await drain();
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
    await approvalsCommand(stack.service.db, ["reject", "all", "--as", "test"]);
    await approvalsCommand(stack.service.db, ["list"]);
    vi.restoreAllMocks();
    expect(lines).toEqual(["Rejected 1 held action(s).", "Nothing is waiting for approval."]);
    await drain();
    expect((await emulatorState(stack)).dashboardUsers.map((u) => u.userName).sort()).toEqual([
      "ann.new@example.com",
      "bob@example.com",
    ]);
    expect((await plan("robert@example.com"))!.action).toContain("rejected by an admin");
    const rejections = await adminApi(stack)("/log?action=reject");
    expect(rejections.body.entries[0]).toMatchObject({ userName: "robert@example.com", actor: "cli:test" });
  });
});

describe("only start and migrate change the schema", () => {
  const name = `scim_cli_unmigrated_${process.pid}`;
  const url = withDatabase(inject("adminDatabaseUrl"), name);
  const admin = (sql: string) => adminQuery(inject("adminDatabaseUrl"), sql);
  const cli = (...args: string[]) =>
    run(process.execPath, [path.join(ROOT, "bin/scim-connector.js"), ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: "error" },
    });
  const tables = async () =>
    (
      await adminQuery<{ n: number }>(
        url,
        `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_name <> 'typeorm_migrations'`,
      )
    )[0]!.n;
  beforeAll(async () => {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin(`CREATE DATABASE ${name}`);
  });
  afterAll(async () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));

  it(
    "plan and approvals on an empty database stop with the fix and create nothing; after migrate they run",
    { timeout: 120_000 },
    async () => {
      for (const args of [
        ["plan", "ann@example.com"],
        ["approvals", "list"],
      ]) {
        await expect(cli(...args)).rejects.toMatchObject({
          code: 1,
          stderr: expect.stringContaining("run `scim-connector migrate`"),
        });
      }
      expect(await tables()).toBe(0); // (reading the migrations may create their bookkeeping table, nothing else)
      await cli("migrate");
      expect(await tables()).toBeGreaterThan(0);
      expect((await cli("approvals", "list")).stdout).toContain("Nothing is waiting for approval.");
    },
  );
});

describe("token create is the documented first step", () => {
  const name = `scim_cli_fresh_${process.pid}`;
  const url = withDatabase(inject("adminDatabaseUrl"), name);
  const admin = (sql: string) => adminQuery(inject("adminDatabaseUrl"), sql);
  beforeAll(async () => {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin(`CREATE DATABASE ${name}`);
  });
  afterAll(async () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));

  it("on a fresh database it migrates first, and the token it prints is stored", { timeout: 120_000 }, async () => {
    const { stdout } = await run(
      process.execPath,
      [path.join(ROOT, "bin/scim-connector.js"), "token", "create", "--name", "okta"],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: "error" } },
    );
    const token = /\b(scim_[\w-]+)/.exec(stdout)?.[1];
    expect(token).toBeDefined();
    const rows = await adminQuery<{ name: string; token_prefix: string }>(
      url,
      `SELECT name, token_prefix FROM scim_tokens WHERE revoked_at IS NULL`,
    );
    expect(rows).toEqual([{ name: "okta", token_prefix: token!.slice(0, 10) }]);
  });
});

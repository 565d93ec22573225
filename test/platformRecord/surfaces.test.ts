import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock.js";
import { analysePending } from "../../src/platformRecord/findings.js";
import { adminApi, startStack, type Stack } from "../support/stack.js";
import { runCli } from "../support/cli.js";
import { platformScim, SCIM_USER } from "../reconcile/helpers.js";
import { insertEvents, recordingHandlers } from "./helpers.js";

/**
 * The unmanaged accounts as an operator reads them: `scim-connector platform unmanaged [--json]`
 * (the real CLI, in a child process) and `GET /admin/api/platform/unmanaged`, both from the one use
 * case (src/platformRecord/unmanaged.ts).
 */

describe("unmanaged accounts on the CLI and the JSON API", () => {
  let stack: Stack;
  const clock = new ManualClock();
  let firstSeen: Date;

  beforeAll(async () => {
    stack = await startStack({ clock, workers: false });
    const made = await platformScim(stack.emulator.url).create({
      schemas: [SCIM_USER],
      userName: "contractor@example.com",
      name: { givenName: "Con", familyName: "Tractor" },
      department: "agency",
      permissions: {
        companyPermissions: ["manage_team"],
        appGroup: [{ appGroupName: "EU Production", appGroupPermissions: ["basic_access"] }],
      },
    });
    expect(made.status).toBe(201);
    firstSeen = new Date(Math.floor(clock.now().getTime() / 1000) * 1000);
    await insertEvents(stack.database.db, [
      { at: firstSeen, actor: "ops-admin@example.com", event: "Added Account", account: "contractor@example.com" },
      { at: firstSeen, actor: "ops-admin@example.com", event: "Added Account", account: "ghost@example.com" },
    ]);
    await analysePending({
      db: stack.service.db,
      clock,
      handlers: recordingHandlers().handlers,
      policy: { ownWriteWindowMinutes: 10 },
    });
    await stack.service.discovery!.runOnce();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const contractor = () => ({
    userName: "contractor@example.com",
    state: "confirmed",
    firstSeen: firstSeen.toISOString(),
    addedBy: "ops-admin@example.com",
    permissions: {
      companyPermissions: ["manage_team"],
      workspaces: [expect.objectContaining({ appGroupName: "EU Production", appGroupPermissions: ["basic_access"] })],
    },
    holds: ["company: manage_team", "EU Production: basic_access"],
  });

  it("platform unmanaged --json prints the accounts as a JSON array; --all adds those found absent", async () => {
    const out = await runCli(stack, ["platform", "unmanaged", "--json"]);
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual([expect.objectContaining(contractor())]);
    const all = await runCli(stack, ["platform", "unmanaged", "--json", "--all"]);
    expect((JSON.parse(all.stdout) as { userName: string; state: string }[]).map((a) => [a.userName, a.state])).toEqual(
      [
        ["contractor@example.com", "confirmed"],
        ["ghost@example.com", "absent"],
      ],
    );
  });

  it("platform unmanaged prints a table; a bad option is refused", async () => {
    const out = await runCli(stack, ["platform", "unmanaged"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^userName\s+state\s+first seen \(UTC\)\s+added by\s+holds\n/);
    expect(out.stdout).toContain("contractor@example.com");
    expect(out.stdout).toContain("company: manage_team; EU Production: basic_access");
    const bad = await runCli(stack, ["platform", "unmanaged", "--jsn"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--jsn");
  });

  it("GET /admin/api/platform/unmanaged answers {accounts: [...]}; a bad query is a 400", async () => {
    const res = await adminApi(stack)("/platform/unmanaged");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accounts: [expect.objectContaining(contractor())] });
    const all = await adminApi(stack)("/platform/unmanaged?all=true");
    expect(all.body.accounts).toHaveLength(2);
    const bad = await adminApi(stack)("/platform/unmanaged?all=maybe");
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^all: /);
  });

  it("the access review lists confirmed accounts as not managed by the IdP: CSV, JSON export and differences", async () => {
    const csv = await adminApi(stack)("/access?format=csv");
    expect(csv.status).toBe(200);
    const lines = csv.text.trim().split("\r\n");
    const contractorLines = lines.filter((l) => l.startsWith('"contractor@example.com",'));
    expect(contractorLines).toHaveLength(2);
    expect(contractorLines[0]).toContain(
      `"contractor@example.com","company","","","manage_team","","not managed by the IdP: made by hand on the platform by ops-admin@example.com, first seen ${firstSeen.toISOString()}"`,
    );
    expect(lines.some((l) => l.startsWith('"ghost@example.com"'))).toBe(false); // looked up, not found
    const json = await adminApi(stack)("/access?format=json&workspace=EU%20Production");
    expect(JSON.parse(json.text)).toEqual([
      expect.objectContaining({
        userName: "contractor@example.com",
        scope: "workspace",
        permission: "basic_access",
        notManagedByIdp: expect.objectContaining({ addedBy: "ops-admin@example.com" }),
      }),
    ]);
    const asOf = await adminApi(stack)(`/access?format=csv&at=${encodeURIComponent(firstSeen.toISOString())}`);
    expect(asOf.text).not.toContain("contractor@example.com"); // known now only
    const differences = await adminApi(stack)("/access/differences");
    expect(differences.body.unmanaged).toEqual([expect.objectContaining({ userName: "contractor@example.com" })]);
  });
});

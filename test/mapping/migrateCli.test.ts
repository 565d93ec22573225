import { execFile } from "node:child_process";
import { chmod, copyFile, mkdtemp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { recordIdentifiers } from "../../src/db/platform/identifierRepository.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";

/**
 * `scim-connector mapping migrate FILE [--write] [--pin-ids]` through the binary: offline unless
 * --pin-ids (so the working directory, where an embedded PostgreSQL would start, stays empty);
 * the migrated file on stdout and the report on stderr, or the file replaced by a rename; exit 1
 * and nothing written when the migration cannot go through.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

const LEGACY = `# Our mapping
department:
  default: engineering

rules:
  # Marketing gets the basics
  - description: Marketing
    group: Marketing
    workspaces:
      - name: EU Production # the big one
        permissions: [send_campaigns_canvases, manage_tags]
        teams:
          - name: Lifecycle
            permissions: [manage_dashboard_users]
`;

async function mappingMigrate(args: string[], env: Record<string, string> = {}) {
  const cwd = await mkdtemp(path.join(os.tmpdir(), "scim-connector-mapping-migrate-"));
  const result = await run(
    process.execPath,
    [path.join(ROOT, "bin/scim-connector.js"), "mapping", "migrate", ...args],
    {
      cwd,
      env: { PATH: process.env.PATH, LOG_LEVEL: "error", ...env },
    },
  ).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  expect(await readdir(cwd)).toEqual([]);
  return result;
}

async function draft(text: string): Promise<string> {
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), "scim-connector-migrate-draft-")), "mapping.yaml");
  await writeFile(file, text);
  return file;
}

type Workspace = { name: string; id?: string; permissions: string[]; teams: { name: string; permissions: string[] }[] };
const workspaceOf = (text: string) =>
  (parse(text) as { rules: { workspaces: Workspace[] }[] }).rules[0]!.workspaces[0]!;

describe("mapping migrate", () => {
  it("prints the migrated file on stdout and the report on stderr, and leaves the file alone", async () => {
    const file = await draft(LEGACY);
    const { code, stdout, stderr } = await mappingMigrate([file]);
    expect(code).toBe(0);
    expect(parse(stdout)).toMatchObject({ permissionModel: "granular" });
    expect(workspaceOf(stdout).permissions).toEqual([
      "launch_campaigns",
      "launch_canvases",
      "view_tags",
      "edit_tags",
      "delete_tags",
    ]);
    expect(workspaceOf(stdout).teams[0]!.permissions).toEqual(["edit_dashboard_users"]);
    expect(stdout).toContain("# Marketing gets the basics\n");
    expect(stderr).toContain(`${file}: migrated to the granular permission model`);
    expect(stderr).toMatch(
      /rule "Marketing" \(line 7\)\n {2}workspace EU Production \(line 10\)\n {4}send_campaigns_canvases → launch_campaigns, launch_canvases\n/,
    );
    expect(stderr).toContain("manage_dashboard_users → edit_dashboard_users");
    expect(stderr).toContain("3 legacy strings translated, 6 granular strings written");
    expect(await readFile(file, "utf8")).toBe(LEGACY);
  });

  it("--write replaces the file by a rename, keeping its comments and mode; a second run finds it granular", async () => {
    const file = await draft(LEGACY);
    await chmod(file, 0o640);
    const before = await stat(file);
    const { code, stdout, stderr } = await mappingMigrate([file, "--write"]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(stdout).toContain(`Wrote ${file}.`);
    const written = await readFile(file, "utf8");
    expect(written).toContain("# Our mapping\ndepartment:");
    expect(written).toContain("      - name: EU Production # the big one\n");
    expect(workspaceOf(written).permissions).toContain("launch_campaigns");
    const after = await stat(file);
    expect(after.ino).not.toBe(before.ino); // a new file renamed over the old one, not a rewrite in place
    expect(after.mode & 0o777).toBe(0o640);
    expect(await readdir(path.dirname(file))).toEqual(["mapping.yaml"]); // no temporary file left

    const again = await mappingMigrate([file, "--write"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("is already granular");
    expect(await readFile(file, "utf8")).toBe(written);
  });

  it("stops on the legacy example file: exit 1, nothing written, each problem named with the YAML to add", async () => {
    const file = await draft("");
    await copyFile(path.join(ROOT, "test/mapping/fixtures/legacy-example.yaml"), file);
    const original = await readFile(file, "utf8");
    const { code, stdout, stderr } = await mappingMigrate([file, "--write"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain(`${file} was not migrated (nothing written)`);
    expect(stderr).toMatch(/workspace EU Production \(line \d+\): has both permissions and a permission set/);
    expect(stderr).toMatch(/"Export User Data" .*from export_user_data.*Every analyst group/);
    expect(stderr).toContain('vocabulary:\n  equivalents:\n    "Export User Data": # from export_user_data');
    expect(await readFile(file, "utf8")).toBe(original);
  });

  it("says what it needs when FILE is missing", async () => {
    const { code, stderr } = await mappingMigrate(["--write"]);
    expect(code).toBe(1);
    expect(stderr).toContain("migrate FILE [--write] [--pin-ids]");
  });
});

describe("mapping migrate --pin-ids", () => {
  let database: TestDatabase;
  const EU = "0b6f3d2e-1c4a-4e8b-9f00-0000000000e1";
  const LIFECYCLE = "0b6f3d2e-1c4a-4e8b-9f00-0000000000f1";

  beforeAll(async () => {
    database = await createTestDatabase();
    await recordIdentifiers(
      database.db,
      [
        { kind: "workspace", id: EU, name: "EU Production", workspaceId: null },
        { kind: "team", id: LIFECYCLE, name: "Lifecycle", workspaceId: EU },
      ],
      new Date(),
    );
  });
  afterAll(() => database.drop());

  it("adds the identifiers the connector learned, read from the database", async () => {
    const file = await draft(LEGACY.replace("    group: Marketing\n", "    group: Marketing\n    roles: [Marketer]\n"));
    const { code, stdout, stderr } = await mappingMigrate([file, "--pin-ids"], { DATABASE_URL: database.url });
    expect(code).toBe(0);
    expect(workspaceOf(stdout)).toMatchObject({ name: "EU Production", id: EU });
    expect(workspaceOf(stdout).teams[0]).toMatchObject({ name: "Lifecycle", id: LIFECYCLE });
    expect(stderr).toContain(`workspace EU Production → id ${EU}`);
    expect(stderr).toContain("1 rule; 2 permission lists migrated");
    expect(stderr).toContain("role Marketer (line 9): no identifier learned yet");
    expect(stderr).toContain("2 identifiers pinned, 1 not");
  });
});

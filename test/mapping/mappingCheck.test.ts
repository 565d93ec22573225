import { execFile } from "node:child_process";
import { readdir, mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/**
 * `scim-connector mapping check FILE` through the binary: offline (no DATABASE_URL, so a command
 * that touched a database would start an embedded one in the working directory, which must stay
 * empty), the boot's checks, the rules in words; exit 1 with each problem's line when invalid.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

async function check(file: string) {
  const cwd = await mkdtemp(path.join(os.tmpdir(), "scim-connector-mapping-check-"));
  const result = await run(process.execPath, [path.join(ROOT, "bin/scim-connector.js"), "mapping", "check", file], {
    cwd,
    env: { PATH: process.env.PATH, LOG_LEVEL: "error" },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  expect(await readdir(cwd)).toEqual([]);
  return result;
}

describe("mapping check", () => {
  it("prints the rules of a valid file, offline", async () => {
    const { code, stdout } = await check(path.join(ROOT, "config/mapping.example.yaml"));
    expect(code).toBe(0);
    expect(stdout).toMatch(/mapping\.example\.yaml is valid: \d+ rules\./);
    expect(stdout).toMatch(/groups: "Platform Admins"\n\s+grants: company: admin/);
    expect(stdout).toContain("pattern /^Analysts-/");
  });

  it("names each problem with its line, and exits 1", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-mapping-draft-"));
    const draft = path.join(dir, "draft.yaml");
    await writeFile(
      draft,
      "department:\n  default: engineering\nrules:\n  - group: Admins\n    companyPermissions: [admn]\n",
    );
    const { code, stderr } = await check(draft);
    expect(code).toBe(1);
    expect(stderr).toContain("Mapping file is invalid");
    expect(stderr).toContain(`${draft}:5:`);
  });
});

import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ensureAdminToken } from "../../src/cli/boot.js";
import { adminTokenMatches } from "../../src/http/admin/auth/localToken.js";

describe("local admin token", () => {
  it("is made once, kept with mode 600, and compared in constant time", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "admin-token-"));
    try {
      const first = await ensureAdminToken(dir);
      expect(first.length).toBeGreaterThanOrEqual(16);
      expect(await ensureAdminToken(dir)).toBe(first);
      expect((await stat(path.join(dir, "admin-token"))).mode & 0o777).toBe(0o600);
      await writeFile(path.join(dir, "admin-token"), "short", { mode: 0o644 });
      const replaced = await ensureAdminToken(dir);
      expect(replaced).not.toBe("short");
      expect((await readFile(path.join(dir, "admin-token"), "utf8")).trim()).toBe(replaced);
      expect((await stat(path.join(dir, "admin-token"))).mode & 0o777).toBe(0o600);
      expect(adminTokenMatches(first, first)).toBe(true);
      expect(adminTokenMatches(`${first}x`, first)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

import { describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../src/config/env.js";

describe("loadEnv", () => {
  it("applies the documented defaults", () => {
    const env = loadEnv({});
    expect(env.PORT).toBe(8080);
    expect(env.PLATFORM_SCIM_DAILY_BUDGET).toBe(5000);
    expect(env.MAPPING_FILE).toBe("config/mapping.yaml");
    expect(env.EMULATOR_API_KEYS).toEqual({ "dev-api-key": "*" });
  });

  it("lists every bad value at once, with secrets redacted", () => {
    let error: unknown;
    try {
      loadEnv({ PORT: "eighty", DATABASE_URL: "mysql://secret@x/db", EMULATOR_API_KEYS: "[1]" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join("\n");
    expect(problems).toMatch(/PORT/);
    expect(problems).toMatch(/DATABASE_URL: must start with postgres:\/\//);
    expect(problems).toMatch(/EMULATOR_API_KEYS: must be a JSON object/);
    expect(problems).not.toContain("secret");
  });

  it("drains for 5 s within 25 s by default, and refuses a delay that does not fit in the timeout", () => {
    const env = loadEnv({});
    expect([env.SHUTDOWN_DELAY_MS, env.SHUTDOWN_TIMEOUT_MS, env.MIGRATE_AT_BOOT]).toEqual([5_000, 25_000, true]);
    expect(loadEnv({ MIGRATE_AT_BOOT: "false" }).MIGRATE_AT_BOOT).toBe(false);
    expect(() => loadEnv({ SHUTDOWN_DELAY_MS: "30000", SHUTDOWN_TIMEOUT_MS: "30000" })).toThrow(
      /SHUTDOWN_TIMEOUT_MS: must be more than SHUTDOWN_DELAY_MS \(30000\)/,
    );
  });

  it("treats empty strings as unset", () => {
    expect(loadEnv({ DATABASE_URL: "", SCIM_TOKEN: " " }).DATABASE_URL).toBeUndefined();
  });

  it.each([
    ["short", "Zx9-kQ2_pL7wM4"],
    ["long but one character", "a".repeat(64)],
    ["long but a repeated word", "passwordpasswordpasswordpassword"],
    ["long, few distinct characters", "abcabcabcabc0101010101010101010101"],
    ["31 varied characters", "Zx9-kQ2_pL7wM4rT8yU1iO5eW3qA6sD"],
  ])("refuses a low-entropy ADMIN_TOKEN or SCIM_TOKEN (%s) with the fix, never echoing it", (_name, token) => {
    for (const name of ["ADMIN_TOKEN", "SCIM_TOKEN"]) {
      let error: unknown;
      try {
        loadEnv({ [name]: token });
      } catch (e) {
        error = e;
      }
      expect(error, name).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join("\n");
      expect(problems).toContain(`${name}: must be a random secret of at least 32 characters`);
      expect(problems).toContain("openssl rand");
      expect(problems).not.toContain(token);
    }
  });

  it.each([
    ["SCIM_TOKEN", "CHANGE-ME-generate-with-openssl-rand-base64-32"],
    ["ADMIN_TOKEN", "CHANGE-ME-generate-with-openssl-rand-base64-32"],
    ["METRICS_TOKEN", "CHANGE-ME-generate-with-openssl-rand-base64-32"],
    ["ADMIN_TOKEN", "changeme-5f1c0a9e7b3d4c2a8e6f0b1d9c7a5e3f"],
    ["PLATFORM_SCIM_TOKEN", "CHANGE-ME"],
    ["PLATFORM_API_KEY", "CHANGE-ME"],
    ["DATABASE_URL", "postgres://scim:CHANGE-ME@postgres:5432/scim"],
  ])("refuses a template's placeholder in %s (%s), never echoing it", (name, value) => {
    let error: unknown;
    try {
      loadEnv({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error, name).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join("\n");
    expect(problems).toContain(`${name}: is the template's placeholder (CHANGE-ME)`);
    expect(problems).toContain(`(got "<redacted>")`);
  });

  it("accepts generated tokens", async () => {
    const { randomBytes } = await import("node:crypto");
    const { generateToken } = await import("../../src/auth/scimTokens.js");
    for (let i = 0; i < 50; i++) {
      const admin = `adm_${randomBytes(24).toString("base64url")}`; // as ensureAdminToken makes them
      const hex = randomBytes(16).toString("hex"); // openssl rand -hex 16: the shortest hex secret that passes
      const b64 = randomBytes(32).toString("base64"); // openssl rand -base64 32
      for (const token of [admin, hex, b64]) expect(loadEnv({ ADMIN_TOKEN: token }).ADMIN_TOKEN).toBe(token);
      expect(loadEnv({ SCIM_TOKEN: generateToken() }).SCIM_TOKEN).toMatch(/^scim_/);
    }
  });
});

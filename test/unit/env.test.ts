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

  it("treats empty strings as unset", () => {
    expect(loadEnv({ DATABASE_URL: "", SCIM_TOKEN: " " }).DATABASE_URL).toBeUndefined();
  });
});

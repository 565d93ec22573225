import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../src/config/env.js";

/** The OAUTH_JWT_* settings are checked at boot, each problem named with its fix. */
describe("OAuth configuration", () => {
  const full = {
    OAUTH_JWT_ISSUER: "https://login.microsoftonline.com/t/v2.0",
    OAUTH_JWT_AUDIENCE: "api://app",
    OAUTH_JWT_SUBJECT: "sub",
    OAUTH_JWT_JWKS_URL: "https://login.microsoftonline.com/t/discovery/v2.0/keys",
  };
  const problems = (env: Record<string, string>): string[] => {
    try {
      loadEnv(env);
      return [];
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
  };

  it("accepts a whole set, or none", () => {
    expect(problems(full)).toEqual([]);
    expect(problems({})).toEqual([]);
  });

  it.each([
    [{ ...full, OAUTH_JWT_SUBJECT: "" }, /OAUTH_JWT_SUBJECT: is required when JWT client assertions are configured/],
    [{ OAUTH_JWT_TENANT_ID: "t" }, /OAUTH_JWT_ISSUER: is required/],
    [{ ...full, OAUTH_JWT_JWKS_URL: "" }, /set exactly one of OAUTH_JWT_JWKS_URL .* and OAUTH_JWT_JWKS_FILE/],
    [{ ...full, OAUTH_JWT_JWKS_FILE: "/etc/hostname" }, /set exactly one of/],
    [{ ...full, OAUTH_JWT_JWKS_URL: "http://keys.example.test/jwks" }, /plain http only on loopback/],
    [{ OAUTH_ACCESS_TOKEN_MINUTES: "0" }, /OAUTH_ACCESS_TOKEN_MINUTES/],
    // 0 removed the floor between key fetches an unknown kid prompts (issue 45, low item 6).
    [{ ...full, OAUTH_JWT_JWKS_REFRESH_SECONDS: "0" }, /OAUTH_JWT_JWKS_REFRESH_SECONDS/],
  ])("refuses a half or unsafe set (%#)", (env, message) => {
    expect(problems(env).join("\n")).toMatch(message);
  });

  it("reads a JWKS file at boot: not JSON, or no keys, stops it", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "oauth-jwks-"));
    const file = (name: string) => path.join(dir, name);
    await writeFile(file("bad.json"), "{not json");
    await writeFile(file("empty.json"), JSON.stringify({ keys: [] }));
    await writeFile(file("good.json"), JSON.stringify({ keys: [{ kty: "EC", crv: "P-256", x: "x", y: "y" }] }));
    const withFile = (name: string) => ({ ...full, OAUTH_JWT_JWKS_URL: "", OAUTH_JWT_JWKS_FILE: file(name) });
    expect(problems(withFile("bad.json")).join("\n")).toMatch(/OAUTH_JWT_JWKS_FILE: cannot be read as JSON/);
    expect(problems(withFile("empty.json")).join("\n")).toMatch(/OAUTH_JWT_JWKS_FILE: is not a JWKS/);
    expect(problems(withFile("missing.json")).join("\n")).toMatch(/OAUTH_JWT_JWKS_FILE: cannot be read/);
    expect(problems(withFile("good.json"))).toEqual([]);
  });
});

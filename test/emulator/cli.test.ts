import { describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { emulatorOptionsFromEnv } from "../../src/cli/emulator.js";
import { startClient } from "./harness.js";

describe("emulator settings from the environment (EMULATOR_API_KEYS, EMULATOR_SCIM_TOKEN, EMULATOR_REQUEST_ORIGINS)", () => {
  it("defaults: dev-api-key with every permission and dev-scim-token", () => {
    expect(emulatorOptionsFromEnv(loadEnv({}))).toEqual({
      apiKeys: { "dev-api-key": "*" },
      scimToken: "dev-scim-token",
    });
  });

  it("keys map to * or a permission list; origins are comma-separated", () => {
    const env = loadEnv({
      EMULATOR_API_KEYS: '{"a":"*","b":["email.status"]}',
      EMULATOR_SCIM_TOKEN: "t",
      EMULATOR_REQUEST_ORIGINS: "https://one.example.com, https://two.example.com",
    });
    expect(emulatorOptionsFromEnv(env)).toEqual({
      apiKeys: { a: "*", b: ["email.status"] },
      scimToken: "t",
      requestOrigins: ["https://one.example.com", "https://two.example.com"],
    });
  });

  it("a key whose value is neither * nor a list of names is a ConfigError", () => {
    expect(() => emulatorOptionsFromEnv(loadEnv({ EMULATOR_API_KEYS: '{"a":true}' }))).toThrow(ConfigError);
  });

  it("an emulator started from those settings enforces them", async () => {
    const c = await startClient(
      emulatorOptionsFromEnv(
        loadEnv({ EMULATOR_API_KEYS: '{"narrow":["email.status"]}', EMULATOR_SCIM_TOKEN: "custom" }),
      ),
    );
    try {
      expect(
        (await c.rest("POST", "/email/status", { email: "a@b.co", subscription_state: "subscribed" }, "narrow")).status,
      ).toBe(200);
      expect((await c.rest("POST", "/email/blacklist", { email: "a@b.co" }, "narrow")).status).toBe(403);
      expect(
        (
          await c.call("GET", "/scim/v2/Users/x", {
            headers: { authorization: "Bearer custom", "x-request-origin": "o" },
          })
        ).status,
      ).toBe(404);
    } finally {
      await c.close();
    }
  });
});

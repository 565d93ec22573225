import { describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { quarantineRulesFromEnv } from "../../src/platform/quarantine.js";

describe("operations settings", () => {
  it.each<[string | undefined, string | number | false]>([
    [undefined, "loopback"],
    ["", "loopback"],
    ["loopback", "loopback"],
    ["1", 1],
    ["false", false],
    ["10.0.0.0/8, loopback", "10.0.0.0/8, loopback"],
  ])("TRUST_PROXY=%s → %s", (raw, expected) => {
    expect(loadEnv(raw === undefined ? {} : { TRUST_PROXY: raw }).TRUST_PROXY).toEqual(expected);
  });

  it.each(["true", "*", "0.0.0.0/0", "::/0", "10.0.0.0/8, 0.0.0.0/0", "0.0.0.0/1", "::/3", "6", "100"])(
    "refuses TRUST_PROXY=%s, which trusts everyone, with the fix",
    (raw) => {
      expect(() => loadEnv({ TRUST_PROXY: raw })).toThrow(
        /TRUST_PROXY: .*name the TLS-terminating proxy instead: "loopback"/,
      );
    },
  );

  it.each(["10.0.0.0/8", "fc00::/7", "192.168.1.10", "172.16.0.0/12, loopback", "2", "5", "uniquelocal"])(
    "accepts TRUST_PROXY=%s",
    (raw) => {
      expect(() => loadEnv({ TRUST_PROXY: raw })).not.toThrow();
    },
  );

  it("admin sessions: 12 h absolute lifetime by default, configurable, never zero", () => {
    expect(loadEnv({}).ADMIN_SESSION_MAX_AGE_HOURS).toBe(12);
    expect(loadEnv({ ADMIN_SESSION_MAX_AGE_HOURS: "8" }).ADMIN_SESSION_MAX_AGE_HOURS).toBe(8);
    expect(() => loadEnv({ ADMIN_SESSION_MAX_AGE_HOURS: "0" })).toThrow(/ADMIN_SESSION_MAX_AGE_HOURS/);
  });

  it("refuses TRUST_PROXY=true and a short METRICS_TOKEN", () => {
    expect(() => loadEnv({ TRUST_PROXY: "true" })).toThrow(ConfigError);
    expect(() => loadEnv({ METRICS_TOKEN: "short" })).toThrow(
      /METRICS_TOKEN: must be at least 16 characters \(got "<redacted>"\)/,
    );
  });

  it("quarantine rules from the environment: the documented defaults, and each knob", () => {
    expect(quarantineRulesFromEnv(loadEnv({}))).toMatchObject({
      enabled: true,
      authFailures: 5,
      failureRatePercent: 50,
      window: 20,
      minCalls: 10,
      coolingMs: 900_000,
    });
    const tuned = quarantineRulesFromEnv(
      loadEnv({
        QUARANTINE_ENABLED: "false",
        QUARANTINE_AUTH_FAILURES: "3",
        QUARANTINE_FAILURE_RATE_PERCENT: "80",
        QUARANTINE_WINDOW: "8",
        QUARANTINE_MIN_CALLS: "50",
        QUARANTINE_COOLING_SECONDS: "2.5",
      }),
    );
    expect(tuned).toMatchObject({
      enabled: false,
      authFailures: 3,
      failureRatePercent: 80,
      window: 8,
      minCalls: 8,
      coolingMs: 2_500,
    });
  });
});

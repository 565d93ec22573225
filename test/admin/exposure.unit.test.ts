import { describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import {
  adminAuthMode,
  assertAdminExposureSafe,
  isLoopbackAddress,
  resolveListenHost,
} from "../../src/http/admin/exposure.js";

const SAML = {
  SAML_ENTRY_POINT: "https://idp/sso",
  SAML_ISSUER: "sp",
  SAML_IDP_CERT: "MIIB",
  SAML_CALLBACK_URL: "https://sp/admin/saml/acs",
};

describe("admin exposure in local mode", () => {
  it("tells SAML, local and half-configured SAML apart", () => {
    expect(adminAuthMode(loadEnv({ ...SAML }))).toBe("saml");
    expect(adminAuthMode(loadEnv({}))).toBe("local");
    expect(() => adminAuthMode(loadEnv({ SAML_ENTRY_POINT: "https://idp/sso" }))).toThrow(ConfigError);
  });

  it("listens on loopback in local mode unless told otherwise", () => {
    expect(resolveListenHost(loadEnv({}), {})).toBe("127.0.0.1");
    expect(resolveListenHost(loadEnv({ HOST: "::1" }), { HOST: "::1" })).toBe("::1");
    expect(() => resolveListenHost(loadEnv({ HOST: "0.0.0.0" }), { HOST: "0.0.0.0" })).toThrow(/loopback only/);
    expect(resolveListenHost(loadEnv({ HOST: "0.0.0.0", ADMIN_ALLOW_REMOTE: "true" }), { HOST: "0.0.0.0" })).toBe(
      "0.0.0.0",
    );
    expect(resolveListenHost(loadEnv({ ...SAML }), {})).toBe("0.0.0.0");
    expect(() => assertAdminExposureSafe(loadEnv({ HOST: "10.0.0.5" }))).toThrow(ConfigError);
    expect(() => assertAdminExposureSafe(loadEnv({ HOST: "127.0.0.1" }))).not.toThrow();
  });

  it("leaves a process without the web role (no admin UI) on the HOST it is given", () => {
    const worker = { HOST: "0.0.0.0", ROLES: "worker,scheduler" };
    expect(resolveListenHost(loadEnv(worker), worker)).toBe("0.0.0.0");
    expect(() => resolveListenHost(loadEnv({ ...worker, ROLES: "worker,web" }), worker)).toThrow(/loopback only/);
    expect(resolveListenHost(loadEnv({ ROLES: "worker" }), {})).toBe("127.0.0.1");
  });

  it("knows loopback peers", () => {
    expect(["127.0.0.1", "::1", "::ffff:127.0.0.1"].every(isLoopbackAddress)).toBe(true);
    expect(["10.0.0.1", "::ffff:10.0.0.1", undefined].some(isLoopbackAddress)).toBe(false);
  });
});

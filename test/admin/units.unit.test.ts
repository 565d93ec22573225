import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { ensureAdminToken } from "../../src/cli/boot.js";
import { adminTokenMatches } from "../../src/http/admin/auth/localToken.js";
import { requireStrongAlgorithms } from "../../src/http/admin/auth/samlAlgorithms.js";
import { parseRoleValues, roleFromProfile } from "../../src/http/admin/auth/samlRoles.js";
import {
  adminAuthMode,
  assertAdminExposureSafe,
  isLoopbackAddress,
  resolveListenHost,
} from "../../src/http/admin/exposure.js";
import { can, type AdminAction } from "../../src/http/admin/policy.js";
import { diffValues } from "../../src/http/admin/ui/components/diff.js";
import type { Profile } from "@node-saml/passport-saml";

const SAML = {
  SAML_ENTRY_POINT: "https://idp/sso",
  SAML_ISSUER: "sp",
  SAML_IDP_CERT: "MIIB",
  SAML_CALLBACK_URL: "https://sp/admin/saml/acs",
};

describe("policy", () => {
  it.each<[AdminAction, boolean, boolean]>([
    ["read", true, true],
    ["approve", false, true],
    ["reconcile", false, true],
    ["resync", false, true],
  ])("%s: viewer %s, admin %s", (action, viewer, admin) => {
    expect(can("viewer", action)).toBe(viewer);
    expect(can("admin", action)).toBe(admin);
    expect(can(undefined, action)).toBe(false);
  });
});

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

  it("knows loopback peers", () => {
    expect(["127.0.0.1", "::1", "::ffff:127.0.0.1"].every(isLoopbackAddress)).toBe(true);
    expect(["10.0.0.1", "::ffff:10.0.0.1", undefined].some(isLoopbackAddress)).toBe(false);
  });
});

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

describe("SAML roles", () => {
  const rules = {
    attributes: ["groups"],
    adminValues: parseRoleValues("Admins, scim-admin"),
    viewerValues: parseRoleValues("viewers"),
  };
  const profile = (groups: unknown) => ({ nameID: "a@x", groups }) as unknown as Profile;
  it.each([
    [["viewers", "admins"], "admin"],
    ["VIEWERS", "viewer"],
    [["staff"], undefined],
    [undefined, undefined],
    [42, undefined],
  ])("%j → %s", (groups, role) => {
    expect(roleFromProfile(profile(groups), rules)).toBe(role);
  });
});

describe("permission diff", () => {
  it("lists added, removed and changed leaves; permission arrays compare as sets", () => {
    const rows = diffValues(
      { department: "Sales", company: ["read"], workspaces: { A: ["read", "write"] } },
      { department: "Ops", company: ["read"], workspaces: { A: ["read"], B: ["read"] } },
    );
    expect(rows.filter((r) => r.kind !== "same")).toEqual([
      { path: "department", kind: "changed", before: '"Sales"', after: '"Ops"' },
      { path: "workspaces.A[write]", kind: "removed", before: "✓" },
      { path: "workspaces.B[read]", kind: "added", after: "✓" },
    ]);
  });
});

describe("SAML signature algorithms", () => {
  const sig = (alg: string, prefix = "ds:") => `<${prefix}SignatureMethod Algorithm="${alg}"/>`;
  const digest = (alg: string) => `<ds:DigestMethod Algorithm="${alg}"></ds:DigestMethod>`;
  const RSA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
  const SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256";
  it.each<[string, string, boolean]>([
    ["RSA-SHA256 over SHA-256", sig(RSA256) + digest(SHA256), true],
    ["no prefix, single quotes", `<SignatureMethod Algorithm='${RSA256}'/>` + digest(SHA256), true],
    ["RSA-SHA1", sig("http://www.w3.org/2000/09/xmldsig#rsa-sha1") + digest(SHA256), false],
    ["SHA-1 digest", sig(RSA256) + digest("http://www.w3.org/2000/09/xmldsig#sha1"), false],
    [
      "a second, weak signature further in",
      sig(RSA256) + digest(SHA256) + sig("http://www.w3.org/2000/09/xmldsig#rsa-sha1"),
      false,
    ],
    ["no Algorithm at all", "<ds:SignatureMethod/>", false],
    [
      "an entity-encoded algorithm (not compared decoded)",
      sig("http://www.w3.org/2001/04/xmldsig-more&#x23;rsa-sha256"),
      false,
    ],
    [
      "a quoted '>' hiding the Algorithm from a naive scan",
      `<ds:SignatureMethod x=">" Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/>`,
      false,
    ],
    ["an unparseable element", `<ds:SignatureMethod Algorithm=${RSA256}/>`, false],
  ])("%s", (_name, xml, ok) => {
    const refused = (() => {
      try {
        requireStrongAlgorithms(xml);
        return false;
      } catch {
        return true;
      }
    })();
    expect(refused).toBe(!ok);
  });
});

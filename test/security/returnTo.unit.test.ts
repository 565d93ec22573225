import { describe, expect, it } from "vitest";
import { safeReturnPath } from "../../src/http/admin/auth/returnTo.js";

/**
 * A sign-in returns only to a page of the admin UI (src/http/admin/auth/returnTo.ts): never to
 * another host, whatever shape the remembered value takes.
 */
describe("where a sign-in may return to", () => {
  it.each([
    "/admin",
    "/admin/users/5dbe7d8c-acfb-4191-aa34-932284491259",
    "/admin/log?outcome=failed&user=ann%40example.com",
    "/admin/oauth/authorize?response_type=code&client_id=okta&redirect_uri=https://okta.example.test/cb&state=s",
  ])("accepts %s", (path) => {
    expect(safeReturnPath("/admin", path)).toBe(path);
  });

  it.each([
    ["another host", "https://evil.example.test/admin"],
    ["a scheme-relative URL", "//evil.example.test/admin"],
    ["a doubled slash inside", "/admin//evil.example.test"],
    ["a backslash (read as a slash)", "/admin/\\evil.example.test"],
    ["a path out of the admin UI", "/adminx/users"],
    ["a dot-dot segment", "/admin/../scim/v2/Users"],
    ["the root", "/"],
    ["a space or control character", "/admin/log\r\nSet-Cookie: x=1"],
    ["more than 2 KB", `/admin/log?q=${"a".repeat(2_100)}`],
    ["not a string", 42],
  ])("refuses %s", (_what, value) => {
    expect(safeReturnPath("/admin", value)).toBeUndefined();
  });
});

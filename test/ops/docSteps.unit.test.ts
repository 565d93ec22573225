import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Steps of the docs that are a value to copy, read out of the docs' own text as a reader's
 * renderer shows it, and checked for doing what the docs say.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const doc = (name: string) => readFile(path.join(ROOT, name), "utf8");

/** A GitHub-flavoured Markdown table row's cells: split on unescaped pipes, then `\|` read as `|`. */
function tableCells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, "")
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim().replaceAll("\\|", "|"));
}

describe("docs/saml-okta.md", () => {
  it("the group attribute statement's regex sends exactly the two values the connector is told", async () => {
    const text = await doc("docs/saml-okta.md");
    const row = text.split("\n").find((line) => line.startsWith("| `role`") && line.includes("Matches regex"));
    expect(row).toBeDefined();
    const [name, format, filter] = tableCells(row!);
    expect([name, format]).toEqual(["`role`", "Unspecified"]);
    const pattern = /^Group attribute: _Matches regex_ `([^`]+)`$/.exec(filter!)?.[1];
    expect(pattern, filter).toBeDefined();
    // The same, outside the table, as typed into Okta's field.
    expect(text).toContain(`with a plain pipe: \`${pattern}\``);
    const regex = new RegExp(pattern!);
    const told = (setting: string) => new RegExp(`\`${setting}=([^\`]+)\``).exec(text)?.[1]?.split(",") ?? [];
    for (const value of [...told("SAML_ADMIN_VALUES"), ...told("SAML_VIEWER_VALUES")]) {
      expect(value, pattern).toMatch(regex);
    }
    expect(told("SAML_ADMIN_VALUES")).toEqual(["scim-connector-admin"]);
    for (const other of ["scim-connector-admins", "x-scim-connector-admin", "scim-connector-", "Everyone"]) {
      expect(other, pattern).not.toMatch(regex);
    }
  });
});

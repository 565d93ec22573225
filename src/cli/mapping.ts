import { ruleGrantsText, ruleGroupsText, ruleName } from "../admin/rules.js";
import { loadMappingFile, MappingError, type Mapping } from "../mapping/file.js";

/**
 * `scim-connector mapping check FILE`: validates a mapping file offline (no database, no platform,
 * no IdP) with the same checks as the boot and prints its rules in the admin UI's words, so a
 * draft is reviewed before it is mounted. Exit 1 with every problem and its line when invalid.
 */
export async function mappingCommand(args: string[]): Promise<void> {
  const [sub, file, ...extra] = args;
  if (sub !== "check" || !file || extra.length)
    throw new Error("mapping needs: check FILE (validates the file offline and prints its rules)");
  let mapping: Mapping;
  try {
    mapping = await loadMappingFile(file);
  } catch (error) {
    if (!(error instanceof MappingError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exitCode = 1;
    return;
  }
  console.log(formatMapping(mapping));
}

function formatMapping(mapping: Mapping): string {
  const { department } = mapping;
  const translations = Object.keys(department.translate).length;
  const lines = [
    `${mapping.source} is valid: ${mapping.rules.length} rule${mapping.rules.length === 1 ? "" : "s"}.`,
    "",
    `Department: ${department.fromAttribute ? "from the IdP's department attribute" : "not from the IdP"}` +
      `${translations ? ` (${translations} translation${translations === 1 ? "" : "s"})` : ""}, else ${department.default}` +
      `${department.allowed ? `; allowed: ${department.allowed.join(", ")}` : ""}`,
    "",
    "Rules (a user gets the union of every rule one of their groups matches):",
  ];
  for (const rule of mapping.rules) {
    lines.push(`  ${ruleName(rule)}`, `    groups: ${ruleGroupsText(rule)}`, `    grants: ${ruleGrantsText(rule)}`);
  }
  if (!mapping.rules.length) lines.push("  none: nobody gets an account");
  return lines.join("\n");
}

import { randomBytes } from "node:crypto";
import { open, readFile, realpath, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { ruleGrantsText, ruleGroupsText, ruleName } from "../admin/mapping/rules.js";
import type { Env } from "../config/env.js";
import { listPlatformIdentifiers } from "../db/platform/identifierRepository.js";
import { loadMappingFile, MappingError } from "../mapping/file.js";
import type { Mapping } from "../mapping/compiled.js";
import { migrateMapping, type LearnedIdentifier } from "../mapping/migrate.js";
import { formatMigrationReport, formatMigrationStop } from "../mapping/migrateReport.js";
import { withDatabase } from "./database.js";

const USAGE =
  "mapping needs: check FILE (validates the file offline and prints its rules), " +
  "or migrate FILE [--write] [--pin-ids] (rewrites a legacy file in the granular permission model)";

/**
 * `scim-connector mapping check FILE`: validates a mapping file offline (no database, no platform,
 * no IdP) with the same checks as the boot and prints its rules in the admin UI's words, so a
 * draft is reviewed before it is mounted. Exit 1 with every problem and its line when invalid.
 *
 * `scim-connector mapping migrate FILE [--write] [--pin-ids]`: the file in the platform's granular
 * model (src/mapping/migrate.ts), on stdout with the report on stderr, or written in place
 * (--write). --pin-ids adds the API identifiers the connector has learned, read from the database.
 */
export async function mappingCommand(env: Env, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === "check" && rest.length === 1) return checkCommand(rest[0]!);
  if (sub === "migrate") return migrateCommand(env, rest);
  throw new Error(USAGE);
}

async function checkCommand(file: string): Promise<void> {
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

async function migrateCommand(env: Env, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: { write: { type: "boolean" }, "pin-ids": { type: "boolean" } },
    allowPositionals: true,
  });
  const [file, ...extra] = positionals;
  if (!file || extra.length) throw new Error(USAGE);
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${file} (${error.code ?? error.message})`);
  });
  const identifiers = values["pin-ids"] ? await learnedIdentifiers(env) : undefined;
  const result = migrateMapping(text, identifiers ? { identifiers } : {});
  if (result.outcome === "stopped") {
    process.stderr.write(`${formatMigrationStop(file, result)}\n`);
    process.exitCode = 1;
    return;
  }
  const report = formatMigrationReport(file, result);
  if (!values.write) {
    process.stdout.write(result.text);
    process.stderr.write(`${report}\n`);
    return;
  }
  if (result.text === text) {
    process.stdout.write(`${report}\nNothing to write: ${file} is unchanged.\n`);
    return;
  }
  await replaceFile(file, result.text);
  process.stdout.write(`${report}\nWrote ${file}. Check it with \`scim-connector mapping check ${file}\`.\n`);
}

/**
 * What `--pin-ids` pins: the identifiers the connector learned from the platform, from its database,
 * found as every other command finds it (beside a running `npm start`, that start's database).
 */
async function learnedIdentifiers(env: Env): Promise<LearnedIdentifier[]> {
  let identifiers: LearnedIdentifier[] = [];
  await withDatabase(env, { migrates: false }, async (db) => {
    identifiers = await listPlatformIdentifiers(db);
  });
  return identifiers;
}

/**
 * Replaces the file atomically: a reader (the service's reload) sees the old file or the new one,
 * never half of one. The new text goes to a temporary file beside the real one (same file
 * system, same mode), which is then renamed over it.
 */
async function replaceFile(file: string, text: string): Promise<void> {
  const target = await realpath(file);
  const { mode } = await stat(target);
  const temporary = path.join(
    path.dirname(target),
    `.${path.basename(target)}.migrate-${randomBytes(4).toString("hex")}.tmp`,
  );
  try {
    const handle = await open(temporary, "wx", mode & 0o777);
    try {
      await handle.writeFile(text, "utf8");
      await handle.chmod(mode & 0o777);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

function formatMapping(mapping: Mapping): string {
  const { department } = mapping;
  const translations = Object.keys(department.translate).length;
  const lines = [
    `${mapping.source} is valid: ${mapping.rules.length} rule${mapping.rules.length === 1 ? "" : "s"}.`,
    ...(mapping.placeholder
      ? [
          `It is a placeholder (line ${mapping.placeholder.line}: "${mapping.placeholder.note}"): NODE_ENV=production refuses it.`,
        ]
      : []),
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
  lines.push(
    "",
    `Permission model: ${mapping.permissionModel}${mapping.permissionModel === "legacy" ? " (the platform refuses legacy strings from December 2026)" : ""}`,
  );
  if (mapping.warnings.length) {
    lines.push(`Warnings (${mapping.warnings.length}):`);
    for (const w of mapping.warnings) lines.push(`  ${w.source}:${w.line}:${w.column}: ${w.message}`);
  }
  return lines.join("\n");
}

import type { LearnedIdentifier } from "./pinIdentifiers.js";
import type { MigratedMapping, MigrationStopped, Translation } from "./migrate.js";

/**
 * `mapping migrate`'s words: per rule and list, each legacy string and its granular strings (a
 * long list collapsed to its count), identifiers pinned or not, what to check, and the counts; or
 * why nothing was written, with the `vocabulary.equivalents` YAML to add.
 */

const COLLAPSE_AFTER = 6;

function listed(strings: string[]): string {
  if (!strings.length) return "nothing";
  if (strings.length <= COLLAPSE_AFTER) return strings.join(", ");
  return `${strings.length} granular permissions (${strings.slice(0, 2).join(", ")}, …)`;
}

function describeTranslation(t: Translation): string {
  const kept = t.fromEquivalents.filter((k) => !t.dropped.includes(k));
  const notes = [
    ...(kept.length ? [`${kept.map((k) => JSON.stringify(k)).join(", ")} from vocabulary.equivalents`] : []),
    ...(t.dropped.length
      ? [`${t.dropped.map((k) => JSON.stringify(k)).join(", ")} dropped on purpose ([] in vocabulary.equivalents)`]
      : []),
  ];
  return `${t.legacy} → ${listed(t.granular)}${notes.length ? ` (${notes.join("; ")})` : ""}`;
}

/** What a migration did, per rule and list, then the counts. */
export function formatMigrationReport(source: string, result: MigratedMapping): string {
  const { report } = result;
  const out: string[] = [];
  if (result.outcome === "alreadyGranular")
    out.push(`${source} is already granular (permissionModel: granular): permissions unchanged.`);
  else out.push(`${source}: migrated to the granular permission model (permissionModel: granular).`);
  let scope = "";
  for (const list of report.lists) {
    if (!list.translations.length && !list.merged) continue;
    if (list.scope !== scope) out.push("", (scope = list.scope));
    out.push(`  ${list.where} (line ${list.line})`);
    for (const t of list.translations) out.push(`    ${describeTranslation(t)}`);
    if (list.kept.length) out.push(`    kept as given (not legacy strings): ${list.kept.join(", ")}`);
    if (list.merged) out.push(`    ${list.merged} duplicate${list.merged === 1 ? "" : "s"} merged`);
  }
  const pinned = report.pins.filter((p) => p.id);
  const notPinned = report.pins.filter((p) => !p.id);
  if (pinned.length)
    out.push(
      "",
      "Pinned identifiers:",
      ...pinned.map((p) => `  ${p.where}: ${kindWord(p.kind)} ${p.name} → id ${p.id} (line ${p.line})`),
    );
  if (notPinned.length)
    out.push(
      "",
      "Not pinned:",
      ...notPinned.map((p) => `  ${p.where}: ${kindWord(p.kind)} ${p.name} (line ${p.line}): ${p.reason}`),
    );
  if (report.warnings.length) out.push("", "Check:", ...report.warnings.map((w) => `  ${w}`));
  const translations = report.lists.flatMap((l) => l.translations);
  const dropped = translations.reduce((n, t) => n + t.dropped.length, 0);
  const merged = report.lists.reduce((n, l) => n + l.merged, 0);
  const kept = report.lists.reduce((n, l) => n + l.kept.length, 0);
  const changedLists = report.lists.filter((l) => l.translations.length || l.merged).length;
  out.push(
    "",
    `${report.rules} rule${report.rules === 1 ? "" : "s"}; ${changedLists} permission list${changedLists === 1 ? "" : "s"} migrated: ` +
      `${translations.length} legacy string${translations.length === 1 ? "" : "s"} translated, ` +
      `${report.lists.reduce((n, l) => n + l.count, 0)} granular strings written, ${merged} duplicate${merged === 1 ? "" : "s"} merged, ` +
      `${dropped} dropped on purpose, ${kept} kept as given` +
      (report.pins.length
        ? `; ${pinned.length} identifier${pinned.length === 1 ? "" : "s"} pinned, ${notPinned.length} not`
        : "") +
      ".",
  );
  return out.join("\n");
}

function kindWord(kind: LearnedIdentifier["kind"]): string {
  return kind === "permissionSet" ? "permission set" : kind;
}

/** Why a migration stopped, and the YAML that answers the display names. */
export function formatMigrationStop(source: string, result: MigrationStopped): string {
  const out = [`${source} was not migrated (nothing written):`, ...result.problems.map((p) => `  - ${p}`)];
  if (result.equivalentsToAdd)
    out.push(
      "",
      "The platform publishes no SCIM string for these. Add them under `vocabulary:` → `equivalents:` (merge into the",
      "file's `vocabulary:` block if it has one), each with the SCIM string the platform shows for it, a list of",
      "them, or [] to drop it on purpose; then run migrate again:",
      "",
      result.equivalentsToAdd,
    );
  return out.join("\n");
}

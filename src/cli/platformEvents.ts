import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { MAX_REPORT_BYTES } from "../platformRecord/csv.js";
import type { PlatformRecord } from "../platformRecord/frontDoor.js";
import type { PlatformImportResult } from "../platformRecord/importer.js";
import { cliActor } from "./commandActor.js";

/**
 * `scim-connector platform events import FILE [--as NAME]`: the Security Event report downloaded
 * from the platform's dashboard, imported (docs/platform-record.md). Prints the counts and each
 * line left out; a file that is not the report is refused (exit 1) and nothing is imported.
 */
export async function platformEventsCommand(
  record: Pick<PlatformRecord, "importReport">,
  args: string[],
): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { as: { type: "string" } },
    allowPositionals: true,
  });
  if (sub !== "import" || positionals.length !== 1)
    throw new Error("platform events needs: import FILE [--as NAME] (the Security Event report, a CSV)");
  const file = positionals[0]!;
  const size = await stat(file).then(
    (s) => s.size,
    (error: NodeJS.ErrnoException) => {
      throw new Error(`Cannot read ${file}: ${error.code ?? error.message}`);
    },
  );
  if (size > MAX_REPORT_BYTES)
    throw new Error(`${file} is larger than ${MAX_REPORT_BYTES / 1024 / 1024} MB: that is not the platform's report`);
  const result = await record.importReport({
    text: await readFile(file, "utf8"),
    source: `cli:${path.basename(file)}`,
    actor: cliActor(values.as),
  });
  console.log(describeImport(result));
}

/** The counts, each line left out, and what the analysis found, in words. */
function describeImport(result: PlatformImportResult): string {
  const lines = [
    `Import ${result.importId}: ${result.rows} row(s) read, ${result.imported} event(s) imported, ${result.duplicates} already known, ${result.skipped.length} line(s) skipped.`,
    ...result.skipped.map((s) => `  line ${s.line}: ${s.reason}`),
  ];
  if (result.findings)
    lines.push(
      `Found: ${Object.entries(result.findings)
        .map(([name, count]) => `${name} ${count}`)
        .join(", ")}.`,
    );
  return lines.join("\n");
}

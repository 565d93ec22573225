import type { Writable } from "node:stream";
import { parseArgs } from "node:util";
import type { PlatformRecord } from "../platformRecord/frontDoor.js";

/**
 * `scim-connector platform unmanaged [--json] [--all]`: the accounts made by hand on the platform
 * (docs/platform-record.md), read from the database only: a table, or with --json an array of
 * objects (`userName`, `state`, `permissions`, `holds`, `firstSeen`, `addedBy`, …). --all adds
 * those the lookup found absent and those the record shows removed.
 */
export async function platformUnmanagedCommand(
  record: Pick<PlatformRecord, "unmanaged">,
  args: string[],
  out: Writable = process.stdout,
): Promise<void> {
  const { values } = parseArgs({ args, options: { json: { type: "boolean" }, all: { type: "boolean" } } });
  const accounts = await record.unmanaged({ all: values.all ?? false });
  if (values.json) {
    out.write(`${JSON.stringify(accounts, null, 2)}\n`);
    return;
  }
  if (!accounts.length) {
    out.write("No account made by hand is known: none in the platform's record that the IdP does not manage.\n");
    return;
  }
  const rows = accounts.map((a) => [
    a.userName,
    a.state,
    a.firstSeen.slice(0, 16).replace("T", " "),
    a.addedBy ?? "—",
    a.state === "confirmed" ? a.holds.join("; ") || "(nothing)" : "(not looked up yet)",
  ]);
  const header = ["userName", "state", "first seen (UTC)", "added by", "holds"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  out.write([line(header), ...rows.map(line)].join("\n") + "\n");
}

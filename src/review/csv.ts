/**
 * One CSV cell (RFC 4180) for the admin exports. Every cell is quoted, so a spreadsheet whose list
 * separator is `;` (or a tab) does not split it; and a formula trigger (= + - @, or a tab or
 * carriage return) that starts the cell, or starts a piece after any separator a spreadsheet
 * might split on (`,` `;` `|` tab, line breaks), is prefixed with ' so it is shown, never run.
 * `Mktg;=1+1;` becomes `"Mktg;'=1+1;"`.
 */
const FORMULA_START = /(^|[,;|\t\r\n][ ]*)(?=[=+\-@\t\r])/g;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '""';
  const text = String(value).replace(FORMULA_START, "$1'");
  return `"${text.replace(/"/g, '""')}"`;
}

/** One CSV record: its cells, comma-separated, ended by CRLF (RFC 4180). */
export const csvLine = (cells: unknown[]): string => `${cells.map(csvCell).join(",")}\r\n`;

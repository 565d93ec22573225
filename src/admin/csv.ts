/**
 * One CSV cell (RFC 4180 quoting) for the admin exports. A cell that starts with = + - @ (or a tab
 * or carriage return) is prefixed with ' so a spreadsheet shows it instead of running it.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

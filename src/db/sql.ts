/** `LIKE` pattern for a literal prefix, case-folded (`%`, `_` and `\` in the text match themselves). */
export function likePrefix(text: string): string {
  return `${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

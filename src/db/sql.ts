/**
 * Rows of a `query()` result. TypeORM's postgres driver returns `[rows, rowCount]` for UPDATE and
 * DELETE (even with RETURNING) and plain rows for everything else; every repository that reads
 * what an UPDATE or DELETE returned goes through this.
 */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === "number") return result[0] as T[];
  return result as T[];
}

/** `LIKE` pattern for a literal prefix, case-folded (`%`, `_` and `\` in the text match themselves). */
export function likePrefix(text: string): string {
  return `${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** `LIKE` pattern for a literal prefix, case-folded (`%`, `_` and `\` in the text match themselves). */
export function likePrefix(text: string): string {
  return `${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * `items` in rounds in which each key appears at most once, each key's items in their order: an
 * INSERT ... ON CONFLICT DO UPDATE may change a row only once per statement, so a batch that names
 * a row twice is written one round per repetition, and the row ends as one statement per item left it.
 */
export function roundsByKey<T>(items: readonly T[], key: (item: T) => string): T[][] {
  const rounds: T[][] = [];
  const seen = new Map<string, number>();
  for (const item of items) {
    const k = key(item);
    const round = seen.get(k) ?? 0;
    seen.set(k, round + 1);
    (rounds[round] ??= []).push(item);
  }
  return rounds;
}

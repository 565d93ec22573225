import type { EvidenceWindow } from "./sections.js";

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const TIME_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * The window of an evidence pack. A bare date is a whole UTC day: `--from 2026-04-01 --to 2026-06-30`
 * covers 1 April 00:00 to the end of 30 June. A time must say its offset.
 */
export function parseEvidenceWindow(from: string | undefined, to: string | undefined): EvidenceWindow {
  if (!from || !to) throw new Error("the evidence window needs both from and to (ISO 8601 dates, e.g. 2026-04-01)");
  const window = { from: parseBound(from, "from", false), to: parseBound(to, "to", true) };
  if (window.from >= window.to) throw new Error(`from (${from}) must be before to (${to})`);
  return window;
}

function parseBound(text: string, name: string, endOfDay: boolean): Date {
  const dateOnly = DATE_ONLY.test(text);
  const at = new Date(dateOnly ? `${text}T00:00:00.000Z` : text);
  if (!(dateOnly || TIME_WITH_OFFSET.test(text)) || Number.isNaN(at.getTime()))
    throw new Error(
      `${name} must be an ISO 8601 date, or a time with its offset (2026-06-30 or 2026-06-30T12:00:00Z), not "${text}"`,
    );
  return dateOnly && endOfDay ? new Date(at.getTime() + 86_400_000) : at;
}

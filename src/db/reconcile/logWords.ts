import type { FailedOutcome, LogOutcome, LogWords } from "../../vocabulary/reconcile.js";

/**
 * Which field a log entry's words go in, written and read back (docs/reconciler.md, "The
 * reconciliation log"): `error` for an entry that failed, `note` for any other, whenever the entry
 * was written. The one table of which outcomes failed.
 */

/** Whether an outcome's words are an error (vocabulary/reconcile.ts's FailedOutcome; src/db imports its types only). */
const WORDS_ARE_ERROR: { [O in LogOutcome]: O extends FailedOutcome ? true : false } = {
  succeeded: false,
  failed: true,
  retrying: true,
  "deferred-for-budget": false,
  held: false,
  rejected: false,
  reported: false,
  enforced: false,
};

/** `words` in the field `outcome` calls for, where the outcome is only known at run time (writing). */
export function logWords(outcome: LogOutcome, words: string | null | undefined): LogWords {
  return WORDS_ARE_ERROR[outcome]
    ? { outcome: outcome as FailedOutcome, error: words ?? null }
    : { outcome: outcome as Exclude<LogOutcome, FailedOutcome>, note: words ?? null };
}

/**
 * An entry's error and note as read back. Entries written before the note column (migration
 * LogNote1763700002000) kept every entry's words in `error`, and stay so in the tamper-evident
 * chain: the words of such an entry that did not fail are read as its note.
 */
export function logEntryWords(row: { outcome: LogOutcome; error: string | null; note: string | null }): {
  error: string | null;
  note: string | null;
} {
  return WORDS_ARE_ERROR[row.outcome]
    ? { error: row.error, note: row.note }
    : { error: null, note: row.note ?? row.error };
}

import { badRequest } from "../http.js";
import type { InvalidPhone, InvalidPhoneReason } from "../state.js";
import { isE164 } from "../validation.js";

/** Pure query rules and selection of `GET /sms/invalid_phone_numbers`. */

export type InvalidPhoneQuery = {
  startMs?: number;
  endMs?: number;
  limit: number;
  offset: number;
  phones?: Set<string>;
  reason?: InvalidPhoneReason;
};

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` as UTC midnight in epoch ms; throws a 400 for anything else. */
function utcMidnight(value: unknown, field: string): number {
  const match = typeof value === "string" ? DATE.exec(value) : null;
  if (!match) throw badRequest(`${field} must be a date YYYY-MM-DD`);
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  if (new Date(ms).toISOString().slice(0, 10) !== value) throw badRequest(`${field} is not a calendar date`);
  return ms;
}

function integer(value: unknown, field: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !/^\d+$/.test(value)) throw badRequest(`${field} must be an integer`);
  const n = Number(value);
  if (n < min || n > max) throw badRequest(`${field} must be between ${min} and ${max}`);
  return n;
}

export function parseInvalidPhoneQuery(query: Record<string, unknown>): InvalidPhoneQuery {
  const startMs = query.start_date === undefined ? undefined : utcMidnight(query.start_date, "start_date");
  const endMs = query.end_date === undefined ? undefined : utcMidnight(query.end_date, "end_date");
  if (startMs !== undefined && endMs !== undefined && startMs >= endMs)
    throw badRequest("start_date must be before end_date");
  const limit = integer(query.limit, "limit", 100, 1, 500);
  const offset = integer(query.offset, "offset", 0, 0, Number.MAX_SAFE_INTEGER);
  const rawPhones = query.phone_numbers ?? query["phone_numbers[]"];
  let phones: Set<string> | undefined;
  if (rawPhones !== undefined) {
    const list = [rawPhones].flat();
    if (list.length > 50) throw badRequest("phone_numbers may hold at most 50 values");
    for (const p of list) if (!isE164(p)) throw badRequest(`phone_numbers: not an E.164 phone number: ${String(p)}`);
    phones = new Set(list as string[]);
  }
  const reason = query.reason;
  if (reason !== undefined && reason !== "provider_error" && reason !== "deactivated")
    throw badRequest("reason must be provider_error or deactivated");
  return { startMs, endMs, limit, offset, phones, reason: reason as InvalidPhoneReason | undefined };
}

/** Start inclusive, end exclusive (both UTC midnight); newest `invalid_detected_at` first. */
export function selectInvalidPhones(records: Iterable<InvalidPhone>, q: InvalidPhoneQuery): InvalidPhone[] {
  const matching: Array<{ at: number; record: InvalidPhone }> = [];
  for (const record of records) {
    const at = Date.parse(record.invalid_detected_at);
    if (q.startMs !== undefined && at < q.startMs) continue;
    if (q.endMs !== undefined && at >= q.endMs) continue;
    if (q.phones && !q.phones.has(record.phone)) continue;
    if (q.reason && record.reason !== q.reason) continue;
    matching.push({ at, record });
  }
  matching.sort((a, b) => b.at - a.at || (a.record.phone < b.record.phone ? -1 : 1));
  return matching.slice(q.offset, q.offset + q.limit).map((m) => m.record);
}

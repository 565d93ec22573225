/**
 * The platform's Security Event record as the emulator keeps it: every dashboard action
 * (`POST /_emulator/dashboard`) and every SCIM write, in arrival order, and the CSV the dashboard's
 * "Security Event Download" and the daily S3 export give. The platform does not publish the CSV's
 * columns; the layout here is the emulator's own (docs/emulator.md, "The dashboard and its
 * security record"), and it is the contract the connector's parser is tested against.
 */

export type SecurityEvent = {
  /** The emulator's clock, ms. */
  at: number;
  actor: string;
  /** The event's name as the platform's report writes it ("Added Account"). */
  event: string;
  /** The affected account's email; null for role, permission set and team events. */
  account: string | null;
  ip: string | null;
  /** The role's, permission set's or team's name for those events; null otherwise. */
  details: string | null;
};

/** The emulator's actor for writes through the SCIM API (the platform does not publish its own). */
export const SCIM_API_ACTOR = "SCIM API";

/** Rows of the downloaded report: the most recent events, as the platform documents. */
export const REPORT_ROWS = 10_000;

/** Events kept in memory; older ones are forgotten so a long rehearsal stays bounded. */
const KEPT_EVENTS = 100_000;

const CSV_HEADER = ["Time (UTC)", "Actor", "Event", "Account", "IP Address", "Details"] as const;

const DAY_MS = 86_400_000;

/** A UTC day, `YYYY-MM-DD`, of a time in ms. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export class SecurityEventLog {
  /** Oldest first (the emulator's clock only moves forward). */
  private readonly events: SecurityEvent[] = [];
  /** Days the daily export has written (src/emulator/security/export.ts); cleared with the events. */
  readonly exportedDays = new Set<string>();

  constructor(private readonly capacity = KEPT_EVENTS) {}

  get size(): number {
    return this.events.length;
  }

  record(event: SecurityEvent): void {
    this.events.push(event);
    // Trimmed in slices of a tenth, not one by one: a shift per event would copy the array each time.
    if (this.events.length > this.capacity)
      this.events.splice(0, this.events.length - this.capacity + Math.floor(this.capacity / 10));
  }

  /** The `limit` most recent events, newest first. */
  recent(limit: number): SecurityEvent[] {
    return this.events.slice(Math.max(0, this.events.length - limit)).reverse();
  }

  /** The events of one UTC day (`YYYY-MM-DD`), newest first. */
  ofDay(day: string): SecurityEvent[] {
    const start = Date.parse(`${day}T00:00:00.000Z`);
    return this.events.filter((e) => e.at >= start && e.at < start + DAY_MS).reverse();
  }

  /** The UTC days that have events, oldest first. */
  days(): string[] {
    // Compared by time rather than formatted per event: the clock moves call this on up to 100,000 events.
    const days = new Set<string>();
    let dayStart = Infinity;
    for (const { at } of this.events) {
      if (at >= dayStart && at < dayStart + DAY_MS) continue;
      const day = utcDay(at);
      days.add(day);
      dayStart = Date.parse(`${day}T00:00:00.000Z`);
    }
    return [...days].sort();
  }

  clear(): void {
    this.events.length = 0;
    this.exportedDays.clear();
  }
}

/** RFC 4180: a field with a comma, a quote, CR or LF is quoted, and its quotes doubled. */
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The report: the header, then one row per event in the order given, every line ended by CRLF. */
export function securityEventsCsv(events: readonly SecurityEvent[]): string {
  const lines = [CSV_HEADER.join(",")];
  for (const e of events) {
    const fields = [new Date(e.at).toISOString(), e.actor, e.event, e.account ?? "", e.ip ?? "", e.details ?? ""];
    lines.push(fields.map(csvField).join(","));
  }
  return lines.join("\r\n") + "\r\n";
}

/** The event as `GET /_emulator/security-events` answers it. */
export function presentSecurityEvent(e: SecurityEvent) {
  return { ...e, at: new Date(e.at).toISOString() };
}

/** The IP address column of a request's remote address (an IPv4-mapped IPv6 address as IPv4). */
export function ipOf(remoteAddress: string | undefined): string | null {
  if (!remoteAddress) return null;
  return remoteAddress.startsWith("::ffff:") && remoteAddress.includes(".") ? remoteAddress.slice(7) : remoteAddress;
}

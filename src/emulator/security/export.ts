import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { log } from "../../logging/logger.js";
import type { EmulatorState } from "../state.js";
import { securityEventsCsv, utcDay } from "./events.js";

/**
 * The platform's daily Security Event export to the customer's S3 bucket, as the emulator plays
 * it: one CSV per UTC day of the emulator's clock, the report's layout with that day's events,
 * written once the day is over (checked on each move of the clock and on a timer), and on demand
 * (`POST /_emulator/security-events/export`). Credentials come from the AWS SDK's default chain
 * unless given (tests give s3rver's).
 */

export type SecurityExportOptions = {
  /** `s3://bucket/prefix` (the prefix may be empty). */
  uri: string;
  /** An S3-compatible endpoint (addressed path-style); AWS itself when unset. */
  endpoint?: string;
  /** Default us-east-1. */
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** How often the timer looks for a finished day; 60 s by default. */
  checkIntervalMs?: number;
};

/** `s3://bucket/prefix` → bucket and prefix (no trailing slash); an Error naming the expected form otherwise. */
export function parseS3Uri(uri: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(uri);
  if (!match) throw new Error(`must be s3://bucket/prefix with a valid bucket name (got ${JSON.stringify(uri)})`);
  return { bucket: match[1]!, prefix: (match[2] ?? "").replace(/\/+$/, "") };
}

function exportKey(prefix: string, day: string): string {
  const name = `security-events-${day}.csv`;
  return prefix ? `${prefix}/${name}` : name;
}

export class SecurityExporter {
  readonly bucket: string;
  readonly prefix: string;
  private readonly client: S3Client;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly state: EmulatorState,
    private readonly options: SecurityExportOptions,
  ) {
    ({ bucket: this.bucket, prefix: this.prefix } = parseS3Uri(options.uri));
    this.client = new S3Client({
      region: options.region ?? "us-east-1",
      ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
  }

  start(): void {
    this.state.clockListeners.add(this.check);
    this.timer = setInterval(this.check, this.options.checkIntervalMs ?? 60_000);
    this.timer.unref();
  }

  /** Stops checking and waits for the writes under way. */
  async stop(): Promise<void> {
    this.state.clockListeners.delete(this.check);
    clearInterval(this.timer);
    await Promise.allSettled([...this.inFlight]);
    this.client.destroy();
  }

  /** Writes each day that is over and not written yet; a failed day is tried again at the next check. */
  async exportFinishedDays(): Promise<string[]> {
    const record = this.state.securityEvents;
    const today = utcDay(this.state.nowMs());
    const due = record.days().filter((day) => day < today && !record.exportedDays.has(day));
    // Claimed before the first write, so a check that runs meanwhile does not write them again.
    for (const day of due) record.exportedDays.add(day);
    const keys: string[] = [];
    for (const day of due) {
      try {
        keys.push(await this.write(day));
      } catch (error) {
        record.exportedDays.delete(day);
        log.warn("emulator", "security export failed", { key: exportKey(this.prefix, day), error: String(error) });
      }
    }
    return keys;
  }

  /**
   * The on-demand export: `day`, or every day with events up to and including today (so far).
   * A write that fails rejects.
   */
  async exportNow(day?: string): Promise<string[]> {
    const today = utcDay(this.state.nowMs());
    const days = day ? [day] : this.state.securityEvents.days().filter((d) => d <= today);
    const keys: string[] = [];
    for (const d of days) {
      keys.push(await this.write(d));
      if (d < today) this.state.securityEvents.exportedDays.add(d);
    }
    return keys;
  }

  private async write(day: string): Promise<string> {
    const key = exportKey(this.prefix, day);
    const body = securityEventsCsv(this.state.securityEvents.ofDay(day));
    const put = this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: "text/csv; charset=utf-8" }),
    );
    this.inFlight.add(put);
    try {
      await put;
    } finally {
      this.inFlight.delete(put);
    }
    return key;
  }

  private readonly check = (): void => {
    void this.exportFinishedDays();
  };
}

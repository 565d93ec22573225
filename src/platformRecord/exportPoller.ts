import { GetObjectCommand, ListObjectsV2Command, S3Client, type _Object } from "@aws-sdk/client-s3";
import { BackgroundLoop, LoopWorker } from "../backgroundLoop.js";
import type { Clock } from "../clock.js";
import type { Env, S3Location } from "../config/env.js";
import type { Database } from "../db/database.js";
import {
  claimExportObject,
  readExportObjects,
  setExportObjectImport,
  whileHoldingExportLock,
} from "../db/platform/eventRepository.js";
import { BadRequestError } from "../errors.js";
import { log } from "../logging/logger.js";
import { MAX_REPORT_BYTES, readSecurityEvents } from "./csv.js";
import { analyseAfterImport, storeReport, type PlatformImportOptions } from "./importer.js";

/**
 * The platform's daily Security Event export (docs/platform-record.md): every
 * SECURITY_EVENTS_POLL_MINUTES, the objects under SECURITY_EVENTS_S3_URI not read yet (by key and
 * ETag) are each read once and imported, on one replica at a time (a session advisory lock; each
 * object is also claimed in the transaction that imports it). Credentials come from the AWS SDK's
 * default chain (environment, web identity, instance role): the connector never reads a key itself.
 */

export type ExportPollerDeps = PlatformImportOptions & {
  db: Database;
  clock: Clock;
  s3: S3Client;
  location: S3Location;
  intervalMs: number;
};

export type ExportPollResult = { objects: number; imported: number; duplicates: number; refused: number };

/** The client for the export's bucket: path-style for an S3-compatible store's endpoint. */
function exportS3Client(env: Env): S3Client {
  const endpoint = env.SECURITY_EVENTS_S3_ENDPOINT;
  return new S3Client({
    ...(env.SECURITY_EVENTS_S3_REGION ? { region: env.SECURITY_EVENTS_S3_REGION } : {}),
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
  });
}

export class PlatformExportPoller extends LoopWorker {
  protected readonly loop: BackgroundLoop;

  constructor(private readonly deps: ExportPollerDeps) {
    super();
    this.loop = new BackgroundLoop({
      category: "platform-record",
      intervalMs: deps.intervalMs,
      pass: async () => void (await this.poll()),
      failure: () => ({ message: "reading the Security Event export failed" }),
    });
  }

  /** One look at the bucket; undefined when another replica is reading it now. */
  async poll(): Promise<ExportPollResult | undefined> {
    const result = await whileHoldingExportLock(this.deps.db, () => this.readNewObjects());
    if (result?.imported) await analyseAfterImport(this.deps);
    return result;
  }

  private async readNewObjects(): Promise<ExportPollResult> {
    const listed = await this.list();
    const known = await readExportObjects(
      this.deps.db,
      listed.map((o) => o.Key!),
    );
    const result: ExportPollResult = { objects: 0, imported: 0, duplicates: 0, refused: 0 };
    for (const object of listed) {
      if (known.get(object.Key!) === object.ETag) continue;
      const read = await this.readObject(object);
      if (read === "refused") result.refused++;
      else if (read) {
        result.objects++;
        result.imported += read.imported;
        result.duplicates += read.duplicates;
      }
    }
    return result;
  }

  /** The objects under the prefix, oldest first (the export writes one a day); folder markers left out. */
  private async list(): Promise<_Object[]> {
    const { s3, location } = this.deps;
    const objects: _Object[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({
          Bucket: location.bucket,
          ...(location.prefix ? { Prefix: location.prefix } : {}),
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      objects.push(...(page.Contents ?? []).filter((o) => o.Key && o.ETag && !o.Key.endsWith("/")));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return objects.sort((a, b) => (a.Key! < b.Key! ? -1 : 1));
  }

  /** Claims, reads and imports one object in one transaction; null when another replica read it first. */
  private async readObject(object: _Object) {
    const { db, clock, s3, location } = this.deps;
    const key = object.Key!;
    const source = `s3://${location.bucket}/${key}`;
    if ((object.Size ?? 0) > MAX_REPORT_BYTES) {
      log.warn("platform-record", "export object too large to be the report; not read", { source, size: object.Size });
      return "refused" as const;
    }
    try {
      return await db.transaction(async (tx) => {
        const now = clock.now();
        if (!(await claimExportObject(tx, key, object.ETag!, now))) return null;
        const got = await s3.send(new GetObjectCommand({ Bucket: location.bucket, Key: key, IfMatch: object.ETag! }));
        const report = readSecurityEvents(await got.Body!.transformToString("utf-8"), this.deps.columns);
        const stored = await storeReport(tx, now, report, { source, actor: null }, this.deps.retentionDays);
        await setExportObjectImport(tx, key, stored.importId);
        return stored;
      });
    } catch (error) {
      // Not the report (or a layout SECURITY_EVENTS_COLUMNS does not name yet): left unread, so a
      // fixed setting reads it at the next poll.
      if (!(error instanceof BadRequestError)) throw error;
      log.warn("platform-record", "export object refused; not imported", { source, reason: error.message });
      return "refused" as const;
    }
  }
}

/** The poller for the scheduler role, when SECURITY_EVENTS_S3_URI is set. */
export function createExportPoller(
  env: Env,
  deps: Omit<ExportPollerDeps, "s3" | "location" | "intervalMs"> & { s3?: S3Client },
): PlatformExportPoller | undefined {
  const location = env.SECURITY_EVENTS_S3_URI;
  if (!location) return undefined;
  return new PlatformExportPoller({
    ...deps,
    s3: deps.s3 ?? exportS3Client(env),
    location,
    intervalMs: env.SECURITY_EVENTS_POLL_MINUTES * 60_000,
  });
}

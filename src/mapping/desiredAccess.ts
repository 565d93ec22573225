import type { Database } from "../db/database.js";
import { listActiveDenies, type AccessDeny } from "../db/campaigns/denyRepository.js";
import { getUserForReconcile, type IdpUserForReconcile } from "../db/idp/userReconcileReads.js";
import { mappingHashInForce, mappingInForce, type MappingRecord } from "../db/mapping/stateRepository.js";
import { log } from "../logging/logger.js";
import { applyDenies, type DeniedGrant } from "./denies.js";
import { desiredDashboardUser, type MappingUser } from "./desired.js";
import type { Mapping } from "./compiled.js";
import { MappingError, parseMapping } from "./file.js";
import type { MappingGroup } from "./match.js";
import type { DesiredDashboardUser } from "./types.js";

/** This replica's own mapping file (src/mapping/store.ts MappingStore). */
export type ReplicaMappingFile = { readonly path: string; current(): Mapping; sourceText(): string };

/**
 * How this replica's mapping file stands against the mapping recorded in force (shared by every
 * replica): `planning` says which one the reconciler plans with, or that planning is paused
 * because this version cannot read the one in force.
 */
export type MappingAgreement = {
  fileVersion: string;
  inForceVersion: string | undefined;
  planning: "file" | "in force" | "paused";
};

/** What the admin pages show: the mapping in force, and a notice when this replica's file is another. */
export type MappingShown = {
  /** The mapping in force; this replica's file while this version cannot read that one (the notice says so). */
  mapping: Mapping;
  /** Its YAML. */
  sourceText: string;
  /** "this replica's mapping file differs from the mapping in force (version …)…", when it does. */
  fileDiffers?: string;
};

/** One user's desired access under a mapping: the mapping's result, less the grants a campaign revoked. */
export type UserDesiredAccess<D extends DeniedGrant = AccessDeny> = {
  desired: DesiredDashboardUser | null;
  /** Active denies whose grant the mapping no longer gives (they end: the IdP stopped granting it). */
  notGranted: D[];
};

/** Thrown instead of a mapping while this replica cannot read the mapping in force (the worker retries later). */
class MappingNotInForceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MappingNotInForceError";
  }
}

const version = (hash: string | undefined) => hash?.slice(0, 12);

/**
 * A user's desired access under `mapping`: the desired dashboard user the mapping gives their
 * groups and assignments, less the grants a campaign revoked (active denies). Pure: the one place
 * this is written; the reconciler's source, the resync's plan and the admin user page all call it.
 */
export function desiredAccessOf<D extends DeniedGrant>(
  user: MappingUser & { groups: readonly MappingGroup[] },
  denies: readonly D[],
  mapping: Mapping,
): UserDesiredAccess<D> {
  return applyDenies(desiredDashboardUser(user, user.groups, mapping), denies);
}

/**
 * The desired state every surface asks (docs/ARCHITECTURE.md, "The mapping in force"): the only
 * reader of `mapping_state`, the mapping every replica shares, which may not be this replica's
 * file during a rollout. The recorded mapping is parsed once per version; while the file is the
 * one in force, the file's own parse is used. Built once per service (src/service.ts) and passed
 * to the reconciler, the resync, the admin pages and the access review; a CLI command that reads
 * the database alone builds one without a file (`recordedOnly`).
 */
export class DesiredAccess {
  /** The mapping recorded in force when it is not this file's (parsed once per version), or why it cannot be read. */
  private recorded: { hash: string; sourceText: string; mapping?: Mapping; problems?: string[] } | undefined;

  /**
   * @param file this replica's mapping file; planned with while it is the one in force.
   * @param recordedName the name a recorded mapping is parsed under (its rules' reasons name it as their file).
   */
  constructor(
    private readonly file: ReplicaMappingFile | undefined,
    private readonly recordedName = "mapping in force",
  ) {}

  /** Reads the mapping in force from the database alone (the access report's and the evidence pack's CLI). */
  static recordedOnly(mappingFile: string | undefined): DesiredAccess {
    return new DesiredAccess(undefined, mappingFile ?? "mapping.yaml");
  }

  /**
   * The mapping to plan with: the one recorded in force, which every replica shares. Normally that
   * is this replica's file; when another replica put a different file in force (a rollout under
   * way, a file changed on one host only), this replica says so loudly and plans with the recorded
   * one, or, when this version cannot read it, throws MappingNotInForceError: never a stale plan.
   */
  async inForce(db: Database): Promise<Mapping> {
    const mapping = await this.inForceIfAny(db);
    if (!mapping) throw new MappingNotInForceError("no mapping has been put in force yet");
    return mapping;
  }

  /** The mapping in force, or null when none was ever recorded and this process has no file (a fresh database). */
  async inForceIfAny(db: Database): Promise<Mapping | null> {
    const hash = await mappingHashInForce(db);
    if (this.file && (hash === undefined || hash === this.file.current().hash)) return this.file.current();
    if (hash === undefined) return null;
    const recorded = await this.readRecorded(db, hash);
    if (recorded?.mapping) return recorded.mapping;
    throw new MappingNotInForceError(
      this.file
        ? `this replica's mapping file (${version(this.file.current().hash)}) is not the mapping in force (${version(hash)}), which this version cannot read: planning paused until they match`
        : `the mapping in force (${version(hash)}) cannot be read by this version: ${recorded?.problems?.join("; ") ?? "it is gone"}`,
    );
  }

  /**
   * What the admin pages show: the mapping in force, with a notice when this replica's file differs.
   * While this version cannot read the one in force, the file's, and the notice says planning is paused.
   */
  async shown(db: Database): Promise<MappingShown> {
    const file = this.file;
    if (!file) {
      const record = await this.record(db);
      return { mapping: await this.inForce(db), sourceText: record?.sourceText ?? "" };
    }
    const hash = await mappingHashInForce(db);
    const fileVersion = version(file.current().hash);
    if (hash === undefined || hash === file.current().hash)
      return { mapping: file.current(), sourceText: file.sourceText() };
    const recorded = await this.readRecorded(db, hash);
    if (recorded?.mapping)
      return {
        mapping: recorded.mapping,
        sourceText: recorded.sourceText,
        fileDiffers: `this replica's mapping file differs from the mapping in force (version ${version(hash)}): shown here is the mapping in force, which the reconciler applies; this replica's file is version ${fileVersion}`,
      };
    return {
      mapping: file.current(),
      sourceText: file.sourceText(),
      fileDiffers: `this replica's mapping file differs from the mapping in force (version ${version(hash)}), which this version cannot read: shown here is this replica's file (version ${fileVersion}); planning is paused until they match`,
    };
  }

  /** Whether this replica's file is the mapping in force (for /readyz and /metrics). */
  async agreement(db: Database): Promise<MappingAgreement> {
    if (!this.file) throw new Error("no mapping file on this process to compare with the mapping in force");
    const fileHash = this.file.current().hash;
    const fileVersion = version(fileHash)!;
    const hash = await mappingHashInForce(db);
    const inForceVersion = version(hash);
    if (hash === undefined || hash === fileHash) return { fileVersion, inForceVersion, planning: "file" };
    const recorded = await this.readRecorded(db, hash);
    return { fileVersion, inForceVersion, planning: recorded?.mapping ? "in force" : "paused" };
  }

  /** The mapping in force as recorded (hash, YAML, when it was put in force): the evidence pack's copy. */
  record(db: Database): Promise<MappingRecord | undefined> {
    return mappingInForce(db);
  }

  /**
   * One IdP user's desired access under the mapping in force (or `mapping`, when the caller already
   * holds the one it shows), with the user and their active denies; undefined when the IdP user
   * does not exist (nothing is desired, and the mapping is not read).
   */
  async ofUser(
    db: Database,
    userId: string,
    mapping?: Mapping,
  ): Promise<(UserDesiredAccess & { user: IdpUserForReconcile; denies: AccessDeny[]; mapping: Mapping }) | undefined> {
    const [user, denies] = await Promise.all([
      getUserForReconcile(db, userId),
      listActiveDenies(db, [userId]).then((m) => m.get(userId) ?? []),
    ]);
    if (!user) return undefined;
    const under = mapping ?? (await this.inForce(db));
    return { user, denies, mapping: under, ...desiredAccessOf(user, denies, under) };
  }

  private async readRecorded(db: Database, hash: string): Promise<DesiredAccess["recorded"]> {
    if (this.recorded?.hash === hash) return this.recorded;
    const state = await mappingInForce(db);
    if (!state) return undefined;
    const { sourceText } = state;
    const fields = this.file && { file: this.file.path, fileVersion: version(this.file.current().hash) };
    try {
      this.recorded = { hash: state.hash, sourceText, mapping: parseMapping(sourceText, this.recordedName) };
      if (fields)
        log.warn("mapping", "this replica's mapping file is not the mapping in force; planning with the one in force", {
          ...fields,
          inForceVersion: version(state.hash),
        });
    } catch (error) {
      const problems = error instanceof MappingError ? error.problems : [String(error)];
      this.recorded = { hash: state.hash, sourceText, problems };
      if (fields)
        log.error("mapping", "this replica cannot read the mapping in force; planning paused until its file matches", {
          ...fields,
          inForceVersion: version(state.hash),
          problems,
        });
    }
    return this.recorded;
  }
}

import { readFile } from "node:fs/promises";
import { watchFile, unwatchFile } from "node:fs";
import type { Database } from "../db/database.js";
import { MappingError, parseMapping } from "./file.js";
import type { Mapping } from "./compiled.js";
import { listIdpUserIds, listUserIdsAssigned } from "../db/idp/userReconcileReads.js";
import {
  listGroupRefs,
  listUsersToRederive,
  recordMappingMarked,
  swapMappingState,
} from "../db/mapping/stateRepository.js";
import { markUsersDirty } from "../db/reconcile/queueRepository.js";
import type { DirtyTrigger } from "../vocabulary/reconcile.js";
import { log } from "../logging/logger.js";
import { affectedByMappingChange, changedRules } from "./change.js";
import { changedCatalogueEntries, changedCatalogueIds } from "./catalogue.js";

const MAX_RULES_NAMED = 5;

/** How long after a failed reload the watcher tries again. */
const RELOAD_RETRY_MS = 5_000;

/**
 * This replica's mapping file, and the one writer of the mapping in force. Loaded and validated at
 * boot (a bad file stops the process); reloaded when the file changes or on SIGHUP (a bad file is
 * refused and the old mapping stays). Putting a new mapping in force marks the users it may affect
 * dirty, at mapping priority (behind IdP changes). What every replica plans with, the mapping
 * recorded in force, is read through DesiredAccess (./desiredAccess.ts), never from here.
 */
export class MappingStore {
  private mapping: Mapping;
  private text: string;
  /**
   * The reload under way. Reloads on one replica run one after the other: the file watcher, SIGHUP
   * and a caller can ask at once, and a second reload that found the mapping already in force must
   * not report back while the first is still marking the users it affects.
   */
  private reloading: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly path: string,
    mapping: Mapping,
    text: string,
    private readonly refusePlaceholder: boolean,
  ) {
    this.mapping = mapping;
    this.text = text;
  }

  /**
   * `refusePlaceholder` (production): a file marked `placeholder:` (a template's mapping) is refused
   * at load and at reload, wherever it lives.
   */
  static async load(path: string, options: { refusePlaceholder?: boolean } = {}): Promise<MappingStore> {
    const text = await readMappingText(path);
    const mapping = parseMapping(text, path);
    if (options.refusePlaceholder) assertNotPlaceholder(mapping);
    warnOf(mapping);
    return new MappingStore(path, mapping, text, options.refusePlaceholder ?? false);
  }

  /** This replica's file, parsed: the mapping in force only while no other replica put another (DesiredAccess says). */
  current(): Mapping {
    return this.mapping;
  }

  sourceText(): string {
    return this.text;
  }

  /**
   * Re-reads the file; returns the problems when it is invalid (the old mapping stays in force).
   * Resolves once the users the change affects are marked, including by a reload already under way.
   */
  reload(db: Database): Promise<{ ok: true; changed: boolean } | { ok: false; problems: string[] }> {
    const next = this.reloading.then(() => this.reloadNow(db));
    this.reloading = next.catch(() => undefined);
    return next;
  }

  private async reloadNow(db: Database): Promise<{ ok: true; changed: boolean } | { ok: false; problems: string[] }> {
    let text: string;
    let mapping: Mapping;
    try {
      text = await readMappingText(this.path);
      mapping = parseMapping(text, this.path);
      if (this.refusePlaceholder) assertNotPlaceholder(mapping);
    } catch (error) {
      const problems = error instanceof MappingError ? error.problems : [String(error)];
      log.error("mapping", "mapping reload refused; the previous mapping stays in force", { problems });
      return { ok: false, problems };
    }
    this.mapping = mapping;
    this.text = text;
    warnOf(mapping);
    return { ok: true, changed: await this.putInForce(db) };
  }

  /**
   * Records this mapping as the one in force and marks affected users dirty when it differs from
   * the one recorded before (also across restarts), then records the marks as written. A change
   * whose marks a stopped replica did not finish is finished here (at the next start or reload of
   * any replica with the same file). Safe to call from every replica: a user marked twice is
   * planned twice, and its second plan is empty.
   */
  async putInForce(db: Database): Promise<boolean> {
    const { changed, unmarked, previousText } = await swapMappingState(db, this.mapping.hash, this.text);
    if (!unmarked) return false;
    if (!changed)
      log.warn(
        "mapping",
        "the mapping in force was not marked through (a replica stopped first): marking its users now",
        {
          version: this.mapping.hash.slice(0, 12),
        },
      );
    let previous: Mapping | undefined;
    try {
      previous = previousText === undefined ? undefined : parseMapping(previousText, "previous mapping");
    } catch {
      previous = undefined; // the old text no longer parses (a newer vocabulary): re-derive everyone
    }
    // At most a few rules and catalogue entries are named in each mark; the log says "mapping
    // change: rule …, line …; catalogue entry …, line …".
    const rules = changedRules(previous, this.mapping).slice(0, MAX_RULES_NAMED);
    const catalogueChanged = previous ? changedCatalogueEntries(previous.catalogue, this.mapping.catalogue) : [];
    const entries = catalogueChanged.slice(0, MAX_RULES_NAMED);
    const trigger: DirtyTrigger = {
      kind: "mapping",
      mappingHash: this.mapping.hash,
      ...(rules.length ? { rules } : {}),
      ...(entries.length ? { entries } : {}),
    };
    const impact = previous
      ? affectedByMappingChange(previous, this.mapping, await listGroupRefs(db))
      : ({ all: true } as const);
    let marked = 0;
    if (impact.all) {
      for (
        let after: string | undefined, ids: string[];
        (ids = await listIdpUserIds(db, after, 1000)).length;
        after = ids[ids.length - 1]
      ) {
        await db.transaction((tx) => markUsersDirty(tx, ids, trigger));
        marked += ids.length;
      }
      const accounts = await listUsersToRederive(db, []);
      await db.transaction((tx) => markUsersDirty(tx, accounts, trigger));
    } else {
      const ids = await listUsersToRederive(
        db,
        impact.groups.map((g) => g.id),
      );
      for (let i = 0; i < ids.length; i += 1000)
        await db.transaction((tx) => markUsersDirty(tx, ids.slice(i, i + 1000), trigger));
      marked = ids.length;
      marked += await this.markAssigned(db, changedCatalogueIds(previous?.catalogue, this.mapping.catalogue), trigger);
    }
    await recordMappingMarked(db, this.mapping.hash);
    log.info("mapping", "mapping put in force", {
      version: this.mapping.hash.slice(0, 12),
      rules: this.mapping.rules.length,
      ...(catalogueChanged.length ? { catalogueChanged: catalogueChanged.map((e) => e.id) } : {}),
      usersMarked: marked,
    });
    return changed;
  }

  /** Marks the users the IdP assigned one of these catalogue ids (a catalogue change), in batches. */
  private async markAssigned(db: Database, ids: string[], trigger: DirtyTrigger): Promise<number> {
    let marked = 0;
    for (
      let after: string | undefined, users: string[];
      (users = await listUserIdsAssigned(db, ids, after, 1000)).length;
      after = users[users.length - 1]
    ) {
      await db.transaction((tx) => markUsersDirty(tx, users, trigger));
      marked += users.length;
    }
    return marked;
  }

  /**
   * Reloads on file change and on SIGHUP, and again RELOAD_RETRY_MS after a reload that failed (the
   * database lost while it was marking: its marks are finished by the next one). Returns a
   * function that stops watching.
   */
  watch(db: Database, intervalMs = 2_000): () => void {
    let retry: NodeJS.Timeout | undefined;
    let stopped = false;
    const reload = () => {
      clearTimeout(retry);
      void this.reload(db).catch((error: unknown) => {
        if (stopped) return; // a reload in flight when the service closed its pools
        log.error("mapping", "mapping reload failed; trying again", { error, retryInMs: RELOAD_RETRY_MS });
        retry = setTimeout(reload, RELOAD_RETRY_MS).unref();
      });
    };
    watchFile(this.path, { interval: intervalMs }, (now, before) => {
      if (now.mtimeMs !== before.mtimeMs) reload();
    });
    process.on("SIGHUP", reload);
    return () => {
      stopped = true;
      clearTimeout(retry);
      unwatchFile(this.path);
      process.off("SIGHUP", reload);
    };
  }
}

/** What loads but deserves attention (legacy strings, with their granular equivalents), once per load. */
function warnOf(mapping: Mapping): void {
  if (mapping.warnings.length)
    log.warn("mapping", "the mapping uses legacy permission strings", {
      warnings: mapping.warnings.map((w) => `${w.source}:${w.line}:${w.column}: ${w.message}`),
    });
}

async function readMappingText(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new MappingError([
      {
        source: path,
        line: 1,
        column: 1,
        message:
          code === "ENOENT"
            ? "mapping file not found: create it (copy config/mapping.example.yaml) or set MAPPING_FILE"
            : `cannot read the mapping file (${code ?? "error"})`,
      },
    ]);
  }
}

/** A template's mapping, refused where it would go live (production). */
function assertNotPlaceholder(mapping: Mapping): void {
  if (!mapping.placeholder) return;
  const { note, line } = mapping.placeholder;
  throw new MappingError([
    {
      source: mapping.source,
      line,
      column: 1,
      message: `this mapping is a template's placeholder ("${note}"), refused with NODE_ENV=production: write your own mapping (start from config/mapping.example.yaml) and remove the placeholder line`,
    },
  ]);
}

import { log } from "../logging/logger.js";
import { loadMappingFile, MappingError, type Mapping } from "./mapping.js";

/**
 * The mapping in force, and its reloads. A reload that fails validation keeps the previous
 * mapping (a typo must not strip everyone's access) and reports the problems; a valid reload
 * whose meaning changed (`hash`) notifies listeners, which mark the affected users dirty.
 * Polling the file, rather than fs.watch, also sees the symlink swaps of Kubernetes ConfigMaps.
 */

export type MappingChange = { before: Mapping; after: Mapping };
export type ReloadResult = { changed: false; mapping: Mapping } | { changed: true; before: Mapping; after: Mapping };

export class MappingStore {
  private mapping: Mapping;
  private readonly listeners: ((change: MappingChange) => void | Promise<void>)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastReportedProblems = "";

  constructor(
    readonly path: string,
    initial: Mapping,
  ) {
    this.mapping = initial;
  }

  /** Loads at boot: a bad file throws MappingError, which stops the process with the list. */
  static async load(path: string): Promise<MappingStore> {
    return new MappingStore(path, await loadMappingFile(path));
  }

  current(): Mapping {
    return this.mapping;
  }

  onChange(listener: (change: MappingChange) => void | Promise<void>): void {
    this.listeners.push(listener);
  }

  /** Re-reads the file. Throws MappingError (keeping the current mapping) when it is invalid. */
  async reload(): Promise<ReloadResult> {
    const next = await loadMappingFile(this.path);
    this.lastReportedProblems = "";
    if (next.hash === this.mapping.hash) {
      this.mapping = next; // same meaning; keep line numbers current for messages
      return { changed: false, mapping: next };
    }
    const before = this.mapping;
    this.mapping = next;
    log.info("mapping", "mapping changed", { source: this.path, rules: next.rules.length });
    for (const listener of this.listeners) await listener({ before, after: next });
    return { changed: true, before, after: next };
  }

  /** Polls the file every `intervalMs`; invalid versions are logged once each and ignored. */
  startPolling(intervalMs = 10_000): void {
    this.stopPolling();
    this.timer = setInterval(() => void this.pollOnce(), intervalMs);
    this.timer.unref();
  }

  stopPolling(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async pollOnce(): Promise<void> {
    try {
      await this.reload();
    } catch (error) {
      const problems = error instanceof MappingError ? error.problems : [(error as Error).message];
      const key = problems.join("\n");
      if (key === this.lastReportedProblems) return;
      this.lastReportedProblems = key;
      log.error("mapping", "mapping file invalid; keeping the previous mapping", { source: this.path, problems });
    }
  }
}

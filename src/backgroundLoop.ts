import { log } from "./logging/logger.js";

/**
 * A hand-written background loop, once: run a pass, wait (or not) before the next, wake early
 * when told, log a failed pass and wait before retrying, and stop cleanly. Used by the reconcile
 * worker, the mirror worker, the scheduler and the notification deliverer.
 */
export type BackgroundLoopOptions = {
  /** Log category of the failure lines. */
  category: string;
  /** The wait after a pass that does not say otherwise. */
  intervalMs: number;
  /** Loops running the pass side by side (default 1). */
  concurrency?: number;
  /** One pass. Returns how long to wait before the next (0: at once), or nothing for `intervalMs`. */
  pass(signal: AbortSignal, loop: number): Promise<number | void>;
  /** What a failed pass logs (default "background pass failed") and how long it waits (default `intervalMs`). */
  failure?: (error: unknown, failures: number) => { message: string; retryInMs?: number };
};

export class BackgroundLoop {
  private loops: Promise<void>[] = [];
  private stopping = false;
  private abort = new AbortController();
  private readonly sleepers = new Set<() => void>();
  /** Bumped by a wake that found a loop mid-pass: that loop runs again instead of sleeping through it. */
  private wakes = 0;

  constructor(private readonly options: BackgroundLoopOptions) {}

  /** Aborted by `stop()`: work in flight that honours it (sends, waits) ends at once. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get running(): boolean {
    return this.loops.length > 0 && !this.stopping;
  }

  start(): void {
    if (this.loops.length) return;
    this.stopping = false;
    if (this.abort.signal.aborted) this.abort = new AbortController();
    this.loops = Array.from({ length: Math.max(1, this.options.concurrency ?? 1) }, (_, i) => this.run(i));
  }

  /** Aborts the waits and the signal, then awaits the passes in flight. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    this.wake();
    await Promise.all(this.loops);
    this.loops = [];
  }

  /** Wakes every idle loop now (a NOTIFY, an admin requeue, new work written in this process). */
  wake(): void {
    this.wakes++;
    for (const wakeUp of [...this.sleepers]) wakeUp();
  }

  /** Wakes one idle loop, if one sleeps: enough when one pass picks up the whole burst. */
  wakeOne(): void {
    const [first] = this.sleepers;
    first?.();
  }

  private async run(index: number): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      const wakes = this.wakes;
      let waitMs: number;
      try {
        waitMs = (await this.options.pass(this.abort.signal, index)) ?? this.options.intervalMs;
        failures = 0;
        if (wakes !== this.wakes) waitMs = 0; // woken mid-pass: look again now
      } catch (error) {
        if (this.stopping) break;
        failures++;
        const { message, retryInMs = this.options.intervalMs } = this.options.failure?.(error, failures) ?? {
          message: "background pass failed",
        };
        const loop = this.options.concurrency && this.options.concurrency > 1 ? { loop: index } : {};
        log.error(this.options.category, message, { error, failures, retryInMs, ...loop });
        waitMs = retryInMs;
      }
      if (waitMs > 0 && !this.stopping) await this.sleep(waitMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wakeUp = () => {
        clearTimeout(timer);
        this.sleepers.delete(wakeUp);
        resolve();
      };
      const timer = setTimeout(wakeUp, ms);
      this.sleepers.add(wakeUp);
    });
  }
}

/** A worker driven by one BackgroundLoop: its start, stop and notify are the loop's. */
export abstract class LoopWorker {
  protected abstract readonly loop: BackgroundLoop;

  start(): void {
    this.loop.start();
  }

  /** Aborts the loop's signal (sends in flight fail at once; their work stays pending) and awaits the pass. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Runs a pass soon (a NOTIFY, an admin requeue, a queued test message). */
  notify(): void {
    this.loop.wake();
  }
}

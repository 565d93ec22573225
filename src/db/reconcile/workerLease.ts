import { randomInt } from "node:crypto";
import pg from "pg";
import { log } from "../../logging/logger.js";
import { CONNECTION_NAMES } from "../dataSource.js";
import { WORKER_LOCK_CLASS } from "./queueRepository.js";

/**
 * A worker's presence in the database: a dedicated connection holding a session advisory lock
 * (WORKER_LOCK_CLASS, id) and LISTENing for queue notifications. When the process dies, or the
 * connection drops, the lock vanishes with it and other replicas may take over its claims.
 * After a lost connection the lease reconnects under a new id, so stale claims are never reused.
 */
export class WorkerLease {
  private client: pg.Client | undefined;
  private currentId = 0;
  private stopped = false;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly databaseUrl: string,
    private readonly channels: readonly string[],
  ) {}

  /** The id claims are made under; 0 while not connected. */
  get id(): number {
    return this.client ? this.currentId : 0;
  }

  onNotify(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  /** Connects if needed; true when the lease is held. Called by the worker before each claim. */
  async ensure(): Promise<boolean> {
    if (this.client) return true;
    if (this.stopped) return false;
    try {
      await this.connect();
      return true;
    } catch (error) {
      log.warn("worker", "lease connection failed", { error });
      return false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      application_name: CONNECTION_NAMES.reconcileLease,
      keepAlive: true,
    });
    client.on("error", () => this.drop(client));
    client.on("end", () => this.drop(client));
    client.on("notification", () => this.listeners.forEach((fn) => fn()));
    await client.connect();
    for (;;) {
      const id = randomInt(1, 2 ** 31 - 1);
      const { rows } = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock($1, $2) AS ok`, [
        WORKER_LOCK_CLASS,
        id,
      ]);
      if (rows[0]?.ok) {
        this.currentId = id;
        break;
      }
    }
    for (const channel of this.channels) await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    this.client = client;
  }

  private drop(client: pg.Client): void {
    if (this.client === client) {
      this.client = undefined;
      if (!this.stopped) log.warn("worker", "lease connection lost; claims made under it are void");
      // Wake the loop so it reconnects promptly.
      this.listeners.forEach((fn) => fn());
    }
  }
}

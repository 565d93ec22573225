import { setTimeout as delay } from "node:timers/promises";
import pg, { type Pool, type PoolClient } from "pg";
import { MigrationExecutor, type DataSource, type QueryRunner } from "typeorm";
import { sqlState } from "../errors.js";

/**
 * The one door to PostgreSQL. TypeORM keeps the pool, the migrations and the transactions behind
 * it; everything outside src/db sees only `Database` and `Queryable`.
 */

const QUERYABLE: unique symbol = Symbol("Queryable");

/** The session advisory lock `migrate` holds (one key; the budget ledger's is 7_429_001). */
const MIGRATION_LOCK = 7_429_002;

/** How long close() waits for the pool's connections to say they ended. */
const CONNECTIONS_CLOSED_WITHIN_MS = 2_000;

/** A row as pg hands it over; callers name its shape, as they would with pg itself. */
type Row = any;

/**
 * Anything that runs SQL: the Database, or the transaction or session handed to a callback. The
 * brand keeps a raw TypeORM object from passing for one.
 */
export interface Queryable {
  readonly [QUERYABLE]: true;
  /** The rows the statement returned (none for a statement without RETURNING). */
  query<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** How many rows the statement inserted, updated or deleted. */
  execute(sql: string, params?: readonly unknown[]): Promise<number>;
}

/** pg's query-config shape, for a store library that runs its own statements (rate-limiter-flexible). */
export type PgQueryConfig = { name?: string; text: string; values?: unknown[] };
export type PgQueryResult = { rows: unknown[]; rowCount: number | null };
type PgConnection = { query(config: PgQueryConfig): Promise<PgQueryResult> };

/**
 * True when the statement's connection cannot serve another: no SQLSTATE (the socket failed) or
 * class 08 / 57P (the server ended the session, e.g. pg_terminate_backend). The server's
 * ErrorResponse arrives before the socket closes, so without this the dead client went back to the pool.
 */
function connectionBroken(error: unknown): boolean {
  const state = sqlState(error);
  return state === undefined || state.startsWith("08") || state.startsWith("57P");
}

/**
 * `config` on `client`, as a pg Query made from its text: handed a config object, pg copies it with
 * Object.defineProperties on every call (1.6 µs here, more than the rest of the statement's JavaScript).
 */
function submit(
  client: PoolClient,
  config: PgQueryConfig,
  done: (error: Error | undefined, result?: PgQueryResult) => void,
): void {
  const query = new pg.Query(config.text, config.values, (error, result) =>
    done(error ?? undefined, result as unknown as PgQueryResult),
  );
  // What pg would have read from the config: a named statement is parsed once per connection.
  (query as { name?: string }).name = config.name;
  client.query(query);
}

class RunnerQueryable implements Queryable {
  readonly [QUERYABLE] = true as const;
  constructor(private readonly runner: QueryRunner) {}

  async query<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    const result = await this.runner.query(sql, params ? [...params] : undefined, true);
    return (result.records ?? []) as T[];
  }

  async execute(sql: string, params?: readonly unknown[]): Promise<number> {
    const result = await this.runner.query(sql, params ? [...params] : undefined, true);
    return result.affected ?? 0;
  }
}

export class Database implements Queryable {
  readonly [QUERYABLE] = true as const;

  constructor(
    private readonly source: DataSource,
    /** The pool's `application_name` (CONNECTION_NAMES), as `pg_stat_activity` shows it. */
    readonly applicationName: string,
    /** TypeORM's own pool (dataSource.ts): prepared statements and pgClient run on it without a query runner. */
    private readonly pool: Pool,
  ) {}

  query<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.withRunner((q) => q.query<T>(sql, params));
  }

  execute(sql: string, params?: readonly unknown[]): Promise<number> {
    return this.withRunner((q) => q.execute(sql, params));
  }

  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.source.transaction((manager) => work(new RunnerQueryable(manager.queryRunner!)));
  }

  /**
   * Rows of a named prepared statement: PostgreSQL parses and plans `sql` once per connection
   * instead of once per call. The caller keeps the set of names bounded (each costs connection memory).
   */
  prepared<T = Row>(name: string, sql: string, params: readonly unknown[]): Promise<T[]> {
    return this.raw({ name, text: sql, values: [...params] }).then((result) => result.rows as T[]);
  }

  /** Runs `work` on one dedicated connection from the pool (session state: advisory locks, LISTEN, SET). */
  async session<T>(work: (session: Queryable) => Promise<T>): Promise<T> {
    const runner = this.source.createQueryRunner();
    try {
      await runner.connect();
      return await work(new RunnerQueryable(runner));
    } finally {
      await runner.release();
    }
  }

  /** A client in pg's own shape over this pool, for libraries that bring their statements (the auth throttle store). */
  pgClient(): PgConnection {
    return { query: (config) => this.raw(config) };
  }

  get isOpen(): boolean {
    return this.source.isInitialized;
  }

  /**
   * Closes the pool once its connections are closed. pg's pool.end() resolves as soon as it has
   * asked each connection to end, before they have: a server stopped right after (the embedded
   * PostgreSQL at the end of a drain) ended them under it, and each logged "idle pool connection
   * lost". Bounded, so a connection that never says it ended cannot hold a shutdown.
   */
  async close(): Promise<void> {
    if (!this.source.isInitialized) return;
    const open = this.pool.totalCount;
    let removed = 0;
    let onRemove = (): void => undefined;
    const closed = new Promise<void>((resolve) => {
      onRemove = () => {
        if (++removed >= open) resolve();
      };
      if (open === 0) resolve();
    });
    this.pool.on("remove", onRemove);
    try {
      await this.source.destroy();
      await Promise.race([closed, delay(CONNECTIONS_CLOSED_WITHIN_MS, undefined, { ref: false })]);
    } finally {
      this.pool.off("remove", onRemove);
    }
  }

  /**
   * Applies pending migrations, each in its own transaction; the names applied. Under a session
   * advisory lock: of replicas starting together, one migrates and the others wait, then find
   * nothing left to do (TypeORM's runner takes no lock; two at once failed on duplicate types).
   * `onWait` is called when another process holds the lock.
   */
  async migrate(onWait?: () => void): Promise<string[]> {
    // One connection holds the lock and runs the migrations (a pool of one must not wait on itself).
    const runner = this.source.createQueryRunner();
    try {
      await runner.connect();
      const [first] = (await runner.query(`SELECT pg_try_advisory_lock($1) AS ok`, [MIGRATION_LOCK])) as {
        ok: boolean;
      }[];
      if (!first?.ok) {
        onWait?.();
        await runner.query(`SELECT pg_advisory_lock($1)`, [MIGRATION_LOCK]);
      }
      try {
        const executor = new MigrationExecutor(this.source, runner);
        executor.transaction = "each";
        return (await executor.executePendingMigrations()).map((m) => m.name);
      } finally {
        await runner.query(`SELECT pg_advisory_unlock($1)`, [MIGRATION_LOCK]);
      }
    } finally {
      await runner.release();
    }
  }

  /** The known migrations not applied yet, in order (empty: the schema is what this version needs, or newer). */
  async pendingMigrations(): Promise<string[]> {
    const known = this.source.migrations.map((m) => m.name ?? m.constructor.name);
    const [table] = await this.query<{ name: string | null }>(`SELECT to_regclass('typeorm_migrations')::text AS name`);
    if (!table?.name) return known;
    const applied = new Set(
      (await this.query<{ name: string }>(`SELECT name FROM typeorm_migrations`)).map((row) => row.name),
    );
    return known.filter((name) => !applied.has(name));
  }

  /** True on a database no migration has touched yet (a fresh one): there is no older version to run under. */
  async isFresh(): Promise<boolean> {
    const [bookkeeping] = await this.query<{ table: string | null }>(
      `SELECT to_regclass('typeorm_migrations')::text AS "table"`,
    );
    // Asking which migrations are pending creates the bookkeeping table, empty.
    if (bookkeeping?.table == null) return true;
    return (await this.query(`SELECT 1 FROM typeorm_migrations LIMIT 1`)).length === 0;
  }

  /** Resolves when PostgreSQL answers a statement on this pool (the readiness check); rejects when it does not. */
  async ping(): Promise<void> {
    await this.query("SELECT 1");
  }

  /** True when every known migration has been applied (the readiness check). */
  async isMigrated(): Promise<boolean> {
    return !(await this.source.showMigrations());
  }

  /**
   * One statement on a pooled pg client, with pg's own result and error. A query runner per
   * statement cost more CPU than the statement's own JavaScript (issue 16); this keeps what the
   * runner did: the client is released to the pool, or discarded when its connection failed.
   */
  private raw(config: PgQueryConfig): Promise<PgQueryResult> {
    // Callbacks inside one promise: on Node 20 every promise costs more while AsyncLocalStorage's hooks
    // are on, and pg-pool's promise-returning connect makes several (docs/performance.md).
    return new Promise((resolve, reject) => {
      this.pool.connect((failed, client) => {
        if (failed || !client) return reject(failed);
        let broken: Error | undefined;
        // The pool stops listening while the client is out; an unheard 'error' would end the process.
        const onError = (error: Error) => (broken ??= error);
        client.on("error", onError);
        const settle = (error: Error | undefined, result?: PgQueryResult) => {
          if (error && connectionBroken(error)) broken ??= error;
          client.removeListener("error", onError);
          client.release(broken);
          if (error) reject(error);
          else resolve(result!);
        };
        try {
          submit(client, config, settle);
        } catch (error) {
          settle(error as Error);
        }
      });
    });
  }

  private async withRunner<T>(work: (q: Queryable) => Promise<T>): Promise<T> {
    const runner = this.source.createQueryRunner();
    try {
      return await work(new RunnerQueryable(runner));
    } finally {
      await runner.release();
    }
  }
}

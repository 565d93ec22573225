import { createServer, type Server } from "node:http";
import type { DataSource } from "typeorm";
import { systemClock, type Clock } from "./clock.js";
import type { Env } from "./config/env.js";
import { createDataSource, runMigrations } from "./db/dataSource.js";
import { createApp } from "./http/app.js";
import { log } from "./logging/logger.js";

/**
 * The running service: database, HTTP server and background workers, wired together.
 * `main.ts` starts one from the environment; integration tests start one in-process.
 */
export type Service = {
  url: string;
  db: DataSource;
  close(): Promise<void>;
};

export type ServiceOptions = {
  env: Env;
  databaseUrl: string;
  clock?: Clock;
};

export async function startService(options: ServiceOptions): Promise<Service> {
  const { env } = options;
  const clock = options.clock ?? systemClock;
  const db = await createDataSource({ url: options.databaseUrl, poolSize: env.DATABASE_POOL_SIZE });
  const applied = await runMigrations(db);
  if (applied.length) log.info("db", "migrations applied", { migrations: applied });

  const server = await listen(env.HOST, env.PORT);
  const url = serverUrl(server, env);
  server.on("request", createApp({ env, db, clock, publicUrl: env.PUBLIC_URL?.replace(/\/$/, "") ?? url }));
  log.info("http", "listening", { url });

  return {
    url,
    db,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await db.destroy();
    },
  };
}

function serverUrl(server: Server, env: Env): string {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : env.PORT;
  const host = env.HOST === "0.0.0.0" || env.HOST === "::" ? "127.0.0.1" : env.HOST;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

async function listen(host: string, port: number): Promise<Server> {
  const server = createServer();
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

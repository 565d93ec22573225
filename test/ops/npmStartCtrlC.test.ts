import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/db/embedded.js";
import { eventually } from "../support/wait.js";

/**
 * Ctrl-C on `npm start` as a terminal sends it: SIGINT to the whole foreground process group,
 * npm, the service and (before) the embedded PostgreSQL alike, with npm relaying it to its child
 * once more. `npm start` runs `node --import tsx`, with no tsx parent process: tsx's relay waited
 * 30 ms for the child to confirm a relayed signal, then sent it again and SIGKILLed the child (exit
 * 130, the embedded PostgreSQL left running), which npm's duplicate SIGINT raced 1 run in 7. The service drains as on a single SIGINT: it keeps serving with its
 * database for SHUTDOWN_DELAY_MS, then exits 0, logging no error or warning. Before, the embedded
 * PostgreSQL stopped at once (about 30 "connection lost" warnings) and the relayed copy of the
 * signal counted as a second Ctrl-C ("exiting at once", exit 130).
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const DELAY_MS = 3_000;

describe("Ctrl-C on `npm start` (SIGINT to its process group)", () => {
  let dir: string | undefined;
  let groupLeader: number | undefined;
  afterAll(async () => {
    if (groupLeader) {
      try {
        process.kill(-groupLeader, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    "drains with its embedded PostgreSQL and exits 0 well before its deadline, logging no error",
    { timeout: 180_000 },
    async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-ctrl-c-"));
      // As root the server runs as the 'postgres' user, which must be able to enter the folder.
      await chmod(dir, 0o755);
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const npm = spawn("npm", ["start"], {
        cwd: ROOT,
        // Its own process group, as a terminal's foreground job is: -pid signals all of it.
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...process.env,
          NODE_ENV: "development",
          LOG_LEVEL: "info",
          DATABASE_URL: "",
          PLATFORM_URL: "",
          EMBEDDED_PG_DIR: path.join(dir, "postgres"),
          HOST: "127.0.0.1",
          PORT: String(port),
          SHUTDOWN_DELAY_MS: String(DELAY_MS),
          SHUTDOWN_TIMEOUT_MS: "20000",
        },
      });
      groupLeader = npm.pid;
      let output = "";
      npm.stdout.on("data", (d: Buffer) => (output += d.toString()));
      npm.stderr.on("data", (d: Buffer) => (output += d.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
        npm.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })),
      );
      await eventually(
        "npm start is ready",
        async () =>
          (await fetch(`${url}/readyz`).then(
            (r) => r.ok,
            () => false,
          )) || npm.exitCode !== null,
        { timeoutMs: 120_000 },
      );
      expect(npm.exitCode, output).toBeNull();
      const idpToken = (await readFile(path.join(dir, "idp-token"), "utf8")).trim();

      const sentAt = Date.now();
      process.kill(-npm.pid!, "SIGINT");
      await eventually("/readyz says 503", async () => (await fetch(`${url}/readyz`)).status === 503);
      // Unready but still serving, on its database: an IdP's write during the delay is kept.
      const created = await fetch(`${url}/scim/v2/Users`, {
        method: "POST",
        headers: { authorization: `Bearer ${idpToken}`, "content-type": "application/scim+json" },
        body: JSON.stringify({
          schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
          userName: "ctrl-c@example.com",
          name: { givenName: "Ctrl", familyName: "C" },
          active: true,
        }),
      });
      expect(created.status, output).toBe(201);

      const exit = await exited;
      groupLeader = undefined;
      // The embedded PostgreSQL was stopped, cleanly (it removes its lock file), not left behind. npm
      // may report its exit a moment before the server's last file operation lands on a loaded
      // machine (seen on a full run at load 10; and its shutdown checkpoint took over 10 s once, on a
      // full run of the suite): the lock file must be gone, not at once. A server left running keeps it.
      // How the service ended first: a lock file left behind after an exit other than 0 says little alone.
      expect({ code: exit.code, signal: exit.signal }, output).toEqual({ code: 0, signal: null });
      // Not held until the requests' grace (SHUTDOWN_TIMEOUT_MS 20 s less the delay, less 2 s: a stop
      // waiting on a connection would end about 18 s after the signal). About DELAY_MS + 1 s on a
      // quiet machine; 5.1 s was seen with six busy loops on two cores, hence the margin.
      expect(exit.at - sentAt, output).toBeLessThan(DELAY_MS + 8_000);
      await eventually(
        "the embedded PostgreSQL's lock file removed",
        async () => !existsSync(path.join(dir!, "postgres", "postmaster.pid")),
        { timeoutMs: 30_000 },
      ).catch((error: Error) => {
        throw new Error(`${error.message} ${Date.now() - exit.at} ms after npm exited; its output:\n${output}`);
      });
      // The test's own /readyz polls during the drain are logged at warn, as every 5xx answer is.
      const logged = output.match(/^\S+ (error|warn) .*$/gm) ?? [];
      expect(
        logged.filter((line) => !/ warn \[http\] request \{"method":"GET","path":"\/readyz","status":503/.test(line)),
        output,
      ).toEqual([]);
    },
  );
});

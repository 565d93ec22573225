import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { eventually } from "../support/wait.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";

/**
 * The README's "The first hour", as written: its curl smoke test of the SCIM API run by bash
 * against a trial (the only substitutions: the trial's free port for 8080 and a token file for
 * .data/idp-token), what a tunnel's visitor is refused, and its line for listening on every
 * interface booted with the values it names, with the banner saying where the server listens.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

/** The banner is printed once the service is up, which can be just after /readyz first answers. */
async function banner(connector: ConnectorProcess): Promise<string> {
  await eventually("the banner is printed", () => Promise.resolve(connector.output().includes("Listening on")));
  return connector.output();
}

async function readmeBlock(marker: string): Promise<string> {
  const readme = await readFile(path.join(ROOT, "README.md"), "utf8");
  const block = new RegExp(`<!-- ${marker} -->\\n+\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(readme)?.[1];
  if (!block) throw new Error(`README.md has no ${marker} block`);
  return block;
}

describe('README, "The first hour"', () => {
  let database: TestDatabase;
  let emulator: RunningEmulator;
  let env: Record<string, string>;
  let dir: string;
  const running: ConnectorProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator({ permissions: "granular-strict" }); // as `npm start` starts it
    dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-first-hour-"));
    env = {
      DATABASE_URL: database.url,
      PLATFORM_URL: emulator.url,
      PLATFORM_SCIM_TOKEN: "dev-scim-token",
      PLATFORM_REQUEST_ORIGIN: "first-hour",
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: await writeMappingFile(),
      RESYNC_CRON: "off",
    };
  });
  afterAll(async () => {
    await Promise.all(running.map((r) => r.kill("SIGKILL")));
    await emulator?.close();
    await database?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    "the curl smoke test creates her, puts her in a mapped group, shows her account on the platform, and deactivates her",
    { timeout: 180_000 },
    async () => {
      // As `npm start` runs it: the demo mapping, and the emulator in its default permission model.
      const connector = await spawnConnector({ ...env, MAPPING_FILE: path.join(ROOT, "config/mapping.yaml") });
      running.push(connector);
      const port = new URL(connector.url).port;
      expect(await banner(connector)).toMatch(
        new RegExp(`Listening on +127\\.0\\.0\\.1:${port} \\(loopback only: Okta or Entra reach it through a tunnel`),
      );

      const tokenFile = path.join(dir, "idp-token");
      await writeFile(tokenFile, `${IDP_TOKEN}\n`);
      const asWritten = async (marker: string) =>
        (await readmeBlock(marker))
          .replaceAll("http://127.0.0.1:8080", connector.url)
          .replaceAll("http://127.0.0.1:9090", emulator.url)
          .replaceAll(".data/idp-token", tokenFile);
      const bash = async (script: string) =>
        (await run("bash", ["-euo", "pipefail", "-c", script], { cwd: ROOT })).stdout.trim().split("\n");
      const smoke = await asWritten("first-hour-smoke");
      const [listed, grouped] = await bash(smoke);
      expect(JSON.parse(listed!)).toMatchObject({ totalResults: 1 });
      expect(JSON.parse(grouped!)).toEqual({ displayName: "Marketing", members: 1 });

      // The platform block, run until the reconciler (after its settle delay) has made her account.
      const platformBlock = await asWritten("first-hour-platform");
      let onPlatform: string[] = [];
      await eventually(
        "the README's platform block shows ann's account",
        async () => {
          onPlatform = await bash(platformBlock);
          return onPlatform.some((line) => line.includes("ann@example.com"));
        },
        { timeoutMs: 90_000 },
      );
      expect(onPlatform.map((line) => JSON.parse(line) as unknown)).toContainEqual({
        userName: "ann@example.com",
        workspaces: ["Production"],
      });

      // The deactivation block, in the same terminal: the smoke block's SCIM, TOKEN, scim() and ID.
      const terminal = [
        ...smoke.split("\n").slice(0, 3),
        `ID=$(scim "$SCIM/Users?filter=userName%20eq%20%22ann@example.com%22" | jq -r '.Resources[0].id')`,
      ].join("\n");
      const [status, after] = await bash(`${terminal}\n${await asWritten("first-hour-deactivate")}`);
      expect(status).toBe("204");
      expect(JSON.parse(after!)).toEqual({ userName: "ann@example.com", active: false });

      // A tunnel's visitor arrives from loopback with X-Forwarded-For: SCIM answers, the rest does not.
      const tunnelled = { "x-forwarded-for": "203.0.113.7" };
      const scim = await fetch(`${connector.url}/scim/v2/Users?count=1`, {
        headers: { ...tunnelled, authorization: `Bearer ${IDP_TOKEN}` },
      });
      expect(scim.status).toBe(200);
      expect((await fetch(`${connector.url}/admin/`, { headers: tunnelled })).status).toBe(403);
      expect((await fetch(`${connector.url}/metrics`, { headers: tunnelled })).status).toBe(403);
    },
  );

  it("its line for every interface boots, and the banner says 0.0.0.0", { timeout: 120_000 }, async () => {
    const line = (await readmeBlock("first-hour-remote")).trim();
    // `KEY=value` or `KEY=$(openssl rand -base64 N)`, then the command.
    const assignment = /([A-Z_]+)=(\$\(openssl rand -base64 (\d+)\)|\S+) /gy;
    const given: Record<string, string> = {};
    let end = 0;
    for (let match; (match = assignment.exec(line)); end = assignment.lastIndex) {
      given[match[1]!] = match[3] ? randomBytes(Number(match[3])).toString("base64") : match[2]!;
    }
    expect(line.slice(end), line).toBe("npm start");
    expect(given.HOST).toBe("0.0.0.0");
    const connector = await spawnConnector({ ...env, ...given });
    running.push(connector);
    const port = new URL(connector.url).port;
    expect(await banner(connector)).toMatch(new RegExp(`Listening on +0\\.0\\.0\\.0:${port} \\(every interface\\)`));
    const metrics = await fetch(`${connector.url}/metrics`, {
      headers: { authorization: `Bearer ${given.METRICS_TOKEN}` },
    });
    expect(metrics.status).toBe(200);
  });
});

import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFile, mkdtemp, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { parse } from "yaml";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.js";
import { freePort } from "../../src/db/embedded.js";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { adminQuery } from "../support/db.js";
import { withDatabase } from "../support/globalSetup.js";
import { emulatorDump } from "../support/emulator.js";
import { imageEnv } from "./dockerImage.js";

/**
 * docs/operations.md's first run with docker compose, as written, as far as it goes without
 * Docker: the `.env` its block writes, interpolated into docker-compose.yml the way compose does,
 * on top of the Dockerfile's runtime ENV, then the image's command (`start`) against a fresh,
 * empty database; the IdP pushes with the SCIM_TOKEN from `.env`; then the documented
 * `docker compose exec connector scim-connector token create`. The emulator stands in for the
 * platform the `.env` names. The only substitutions are the ones Docker would make: the postgres
 * service's host, the mounted mapping file's path, and a loopback address and free port.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

/** The `KEY=value` lines of the `.env` the documented block writes, with its `$(openssl rand …)` run. */
async function documentedEnvFile(): Promise<Record<string, string>> {
  const doc = await readFile(path.join(ROOT, "docs/operations.md"), "utf8");
  const block = /<!-- compose-first-run -->\n+```sh\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error("docs/operations.md has no compose-first-run block");
  const env = /cat > \.env <<EOF\n([\s\S]*?)\nEOF/.exec(block)?.[1];
  if (!env) throw new Error("the compose-first-run block writes no .env");
  return Object.fromEntries(
    env.split("\n").map((line) => {
      const [, key, value] = /^([A-Z_]+)=(.*)$/.exec(line)!;
      const random = /^\$\(openssl rand -(hex|base64) (\d+)\)$/.exec(value!);
      return [key!, random ? randomBytes(Number(random[2])).toString(random[1] as "hex" | "base64") : value!];
    }),
  );
}

/** Compose's interpolation of `${VAR}`, `${VAR:-default}` and `${VAR:?error}`; a missing required value throws, as `up` does. */
function interpolate(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const value = vars[name];
    if (value) return value;
    if (op === "?") throw new Error(`required variable ${name} is missing a value: ${arg}`);
    return op === "-" ? arg! : "";
  });
}

type ComposeService = {
  environment: Record<string, string | null>;
  volumes: { type: string; source: string; target: string }[];
  command?: string[];
};

async function composeServices(vars: Record<string, string>): Promise<Record<string, ComposeService>> {
  const text = await readFile(path.join(ROOT, "docker-compose.yml"), "utf8");
  // Comments are not interpolated by compose; YAML drops them first.
  const withoutComments = text
    .split("\n")
    .filter((line) => !/^\s*#/.test(line))
    .join("\n");
  return (parse(interpolate(withoutComments, vars)) as { services: Record<string, ComposeService> }).services;
}

describe("docker compose: the documented first run", () => {
  const name = `scim_compose_first_run_${process.pid}`;
  const adminUrl = () => inject("adminDatabaseUrl");
  let platform: RunningEmulator;
  let connector: ConnectorProcess | undefined;
  let hostDir: string;

  beforeAll(async () => {
    await adminQuery(adminUrl(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await adminQuery(adminUrl(), `CREATE DATABASE ${name}`);
    platform = await startEmulator();
    hostDir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-compose-"));
  });
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await platform?.close();
    await adminQuery(adminUrl(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it("compose refuses to start while .env lacks a value the docs call required, and starts without the others", async () => {
    const dotenv = await documentedEnvFile();
    const doc = await readFile(path.join(ROOT, "docs/operations.md"), "utf8");
    const rule = /^- Every value above is required except ([^:]*):/m.exec(doc)?.[1];
    expect(rule, "docs/operations.md names the optional values").toBeDefined();
    const optional = [...rule!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!);
    expect(optional.length).toBeGreaterThan(0);
    const refusal = async (name: string) => {
      const { [name]: _, ...without } = dotenv;
      return composeServices(without).then(
        () => "starts",
        (error: Error) => error.message,
      );
    };
    const names = Object.keys(dotenv);
    const outcomes = await Promise.all(names.map(async (name) => [name, await refusal(name)]));
    const expected = names.map((name) => [
      name,
      optional.includes(name) ? "starts" : `required variable ${name} is missing`,
    ]);
    // A refusal's message goes on with compose's hint (`:?…`); its start is what `up` prints.
    const started = outcomes.map(([name, outcome]) => [name, outcome!.replace(/ a value:.*$/s, "")]);
    expect(Object.fromEntries(started)).toEqual(Object.fromEntries(expected));
  });

  it(
    "starts on the first `up` against a fresh database, provisions with the .env token, and token create works",
    { timeout: 180_000 },
    async () => {
      // `cp config/mapping.example.yaml mapping.yaml`
      await copyFile(path.join(ROOT, "config/mapping.example.yaml"), path.join(hostDir, "mapping.yaml"));
      const dotenv: Record<string, string> = {
        ...(await documentedEnvFile()),
        // The values the operator replaces (production refuses the docs' example.com hosts): the
        // connector's own URL, and the platform, here the emulator with its credentials.
        PUBLIC_URL: "https://scim.acme-corp.net",
        PLATFORM_URL: platform.url,
        PLATFORM_SCIM_TOKEN: "dev-scim-token",
        PLATFORM_API_KEY: "dev-api-key",
      };
      const services = await composeServices(dotenv);
      const service = services.connector!;
      // A value that interpolates to nothing (`${PLATFORM_API_KEY:-}`) is YAML null: compose passes no value.
      const given = Object.entries(service.environment).filter((e): e is [string, string] => e[1] !== null);
      const env: Record<string, string> = { ...imageEnv(), ...Object.fromEntries(given) };
      expect(env.NODE_ENV).toBe("production");

      // What Docker would do: the postgres service's database, the bind mount, the published port.
      const databaseUrl = env.DATABASE_URL!;
      expect(databaseUrl).toBe(`postgres://scim:${dotenv.POSTGRES_PASSWORD}@postgres:5432/scim_connector`);
      env.DATABASE_URL = withDatabase(adminUrl(), name);
      const mount = service.volumes.find((v) => v.target === env.MAPPING_FILE);
      expect(mount?.source).toBe("./mapping.yaml");
      env.MAPPING_FILE = path.join(hostDir, mount!.source);
      expect(env.HOST).toBe("0.0.0.0");
      env.HOST = "127.0.0.1";
      expect(env.PORT).toBe("8080");
      const port = await freePort();
      env.PORT = String(port);

      connector = await spawnConnector(env, port);
      expect(connector.output()).toContain(`SCIM base URL   ${dotenv.PUBLIC_URL}/scim/v2`);

      // The IdP, with the SCIM_TOKEN from .env: a member of a group the example mapping maps.
      const scimWith = async (token: string) =>
        fetch(`${connector!.url}/scim/v2/Users?count=1`, { headers: { authorization: `Bearer ${token}` } });
      expect((await scimWith(dotenv.SCIM_TOKEN!)).status).toBe(200);
      const ann = await (async () => {
        const res = await fetch(`${connector!.url}/scim/v2/Users`, {
          method: "POST",
          headers: { authorization: `Bearer ${dotenv.SCIM_TOKEN}`, "content-type": "application/scim+json" },
          body: JSON.stringify({
            schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
            userName: "ann@example.com",
            name: { givenName: "Ann", familyName: "Example" },
            active: true,
          }),
        });
        expect(res.status).toBe(201);
        return ((await res.json()) as { id: string }).id;
      })();
      const group = await fetch(`${connector.url}/scim/v2/Groups`, {
        method: "POST",
        headers: { authorization: `Bearer ${dotenv.SCIM_TOKEN}`, "content-type": "application/scim+json" },
        body: JSON.stringify({
          schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
          displayName: "Platform Admins",
          members: [{ value: ann }],
        }),
      });
      expect(group.status).toBe(201);
      await vi.waitFor(
        async () =>
          expect((await emulatorDump(platform.url)).dashboardUsers.map((u) => u.userName)).toEqual(["ann@example.com"]),
        { timeout: 60_000, interval: 100 },
      );

      // `docker compose exec connector scim-connector token create --name entra`: the container's environment.
      const { stdout } = await run(
        process.execPath,
        [path.join(ROOT, "bin/scim-connector.js"), "token", "create", "--name", "entra"],
        { cwd: ROOT, env: { PATH: process.env.PATH, ...env, LOG_LEVEL: "error" } },
      );
      const token = /\b(scim_[\w-]+)/.exec(stdout)![1]!;
      expect((await scimWith(token)).status).toBe(200);
    },
  );
});

import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { checkStartEnv } from "../../src/cli/boot.js";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { startEmulator } from "../../src/emulator/index.js";
import { imageEnv } from "./dockerImage.js";

/**
 * Steps of the docs that are a value to copy, read out of the docs' own text as a reader's
 * renderer shows it, and checked for doing what the docs say.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const doc = (name: string) => readFile(path.join(ROOT, name), "utf8");

/** A GitHub-flavoured Markdown table row's cells: split on unescaped pipes, then `\|` read as `|`. */
function tableCells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, "")
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim().replaceAll("\\|", "|"));
}

describe("docs/saml-okta.md", () => {
  it("the group attribute statement's regex sends exactly the two values the connector is told", async () => {
    const text = await doc("docs/saml-okta.md");
    const row = text.split("\n").find((line) => line.startsWith("| `role`") && line.includes("Matches regex"));
    expect(row).toBeDefined();
    const [name, format, filter] = tableCells(row!);
    expect([name, format]).toEqual(["`role`", "Unspecified"]);
    const pattern = /^Group attribute: _Matches regex_ `([^`]+)`$/.exec(filter!)?.[1];
    expect(pattern, filter).toBeDefined();
    // The same, outside the table, as typed into Okta's field.
    expect(text).toContain(`with a plain pipe: \`${pattern}\``);
    const regex = new RegExp(pattern!);
    const told = (setting: string) => new RegExp(`\`${setting}=([^\`]+)\``).exec(text)?.[1]?.split(",") ?? [];
    for (const value of [...told("SAML_ADMIN_VALUES"), ...told("SAML_VIEWER_VALUES")]) {
      expect(value, pattern).toMatch(regex);
    }
    expect(told("SAML_ADMIN_VALUES")).toEqual(["scim-connector-admin"]);
    for (const other of ["scim-connector-admins", "x-scim-connector-admin", "scim-connector-", "Everyone"]) {
      expect(other, pattern).not.toMatch(regex);
    }
  });
});

describe("docs/go-live.md", () => {
  it("§4's tokens are every secret the production boot asks for when the checklist is followed", async () => {
    const text = await doc("docs/go-live.md");
    const section = /## 4\. The service\n([\s\S]*?)\n## 5\./.exec(text)?.[1] ?? "";
    const tokensBullet = /^- Tokens:[\s\S]*?(?=\n- )/m.exec(section)?.[0] ?? "";
    expect(tokensBullet).not.toBe("");
    const named = [...tokensBullet.matchAll(/`([A-Z_]+_TOKEN)`/g)].map((m) => m[1]!);
    // §1–§4 without SAML: production, its database, the platform, the mapping, PUBLIC_URL, HOST left
    // at its default and the listener allowed beyond loopback (§4's ADMIN_ALLOW_REMOTE=true); hosts
    // of the operator's own (production refuses example.com's, reserved for documentation).
    const followed: Record<string, string> = {
      NODE_ENV: "production",
      DATABASE_URL: "postgres://scim_connector:s3cret-Pa55word@db.acme-corp.net:5432/scim_connector",
      PLATFORM_URL: "https://rest.iad-02.acme-platform.net",
      PLATFORM_SCIM_TOKEN: randomBytes(24).toString("base64"),
      PLATFORM_REQUEST_ORIGIN: "scim.acme-corp.net",
      MAPPING_FILE: path.join(ROOT, "config/mapping.example.yaml"),
      PUBLIC_URL: "https://scim.acme-corp.net",
      ADMIN_ALLOW_REMOTE: "true",
    };
    expect(section).toContain("`ADMIN_ALLOW_REMOTE=true`");
    const asked = (() => {
      try {
        checkStartEnv(loadEnv(followed), followed);
        return [];
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        return error.problems.map((problem) => /^([A-Z_]+):/.exec(problem)?.[1] ?? problem);
      }
    })();
    for (const name of asked) expect(named, `the boot asks for ${name}`).toContain(name);
    // With every token the bullet names set, the boot's checks pass.
    const tokens = Object.fromEntries(named.map((name) => [name, randomBytes(32).toString("base64")]));
    const filled = { ...followed, ...tokens };
    expect(checkStartEnv(loadEnv(filled), filled).listenHost).toBe("0.0.0.0");
  });
});

describe("docker-compose.yml's connector", () => {
  it("is published on the host's loopback address unless .env names another", async () => {
    const compose = parse(await doc("docker-compose.yml")) as { services: Record<string, { ports?: string[] }> };
    const [published] = compose.services.connector!.ports!;
    // Compose's interpolation of `${NAME:-default}` with nothing set in .env, then with an address set.
    const withEnv = (env: Record<string, string>) =>
      published!.replace(/\$\{(\w+):-([^}]*)\}/g, (_, name: string, fallback: string) => env[name] ?? fallback);
    expect(withEnv({})).toBe("127.0.0.1:8080:8080");
    expect(withEnv({ CONNECTOR_PUBLISH_ADDRESS: "0.0.0.0" })).toBe("0.0.0.0:8080:8080");
  });
});

describe("docker-compose.yml's trial emulator", () => {
  it("is health-checked on the port it listens on (the image's own check probes the connector's PORT)", async () => {
    const compose = parse(await doc("docker-compose.yml")) as {
      services: Record<string, { command?: string[]; healthcheck?: { test: string[] } }>;
    };
    const service = compose.services.emulator!;
    const port = service.command![service.command!.indexOf("--port") + 1]!;
    const dockerfile = await doc("Dockerfile");
    const imageCheck = ["CMD", ...(JSON.parse(/^\s*CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[])];
    // What Docker runs: the service's own test, else the image's HEALTHCHECK, in the image's environment.
    const [kind, ...argv] = service.healthcheck?.test ?? imageCheck;
    expect(kind).toBe("CMD");
    const emulator = await startEmulator({ port: 0 });
    try {
      // The one substitution: a free port for the emulator's.
      const command = argv.map((arg) => arg.replaceAll(port, new URL(emulator.url).port));
      const exit = await new Promise<number | null>((resolve) => {
        const child = spawn(command[0] === "node" ? process.execPath : command[0]!, command.slice(1), {
          env: { PATH: process.env.PATH, ...imageEnv() },
          stdio: "ignore",
        });
        child.once("exit", resolve);
      });
      expect(exit, command.join(" ")).toBe(0);
    } finally {
      await emulator.close();
    }
  });
});

describe("README's command list", () => {
  it("names every command the CLI's usage lists", async () => {
    const { stdout } = await run(process.execPath, [path.join(ROOT, "bin/scim-connector.js"), "--help"], { cwd: ROOT });
    const commands = new Set([...stdout.matchAll(/^ {2}([a-z][a-z-]+)\b/gm)].map((m) => m[1]!));
    expect(commands.size).toBeGreaterThan(10);
    const readme = await doc("README.md");
    const block = /## Commands\n+```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const listed = new Set([...block.matchAll(/^npx scim-connector ([a-z-]+)/gm)].map((m) => m[1]!));
    expect([...commands].filter((command) => !listed.has(command))).toEqual([]);
  });

  it("runs its offline mapping lines as written, on files a clone has", async () => {
    const readme = await doc("README.md");
    const block = /## Commands\n+```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const lines = [...block.matchAll(/^npx scim-connector (mapping (?:check|migrate) \S+)/gm)].map((m) => m[1]!);
    expect(lines).toEqual(["mapping check config/mapping.yaml", "mapping migrate config/mapping.legacy.yaml"]);
    for (const line of lines) {
      const result = await run(process.execPath, [path.join(ROOT, "bin/scim-connector.js"), ...line.split(" ")], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, LOG_LEVEL: "error" },
      });
      expect(result.stdout, line).not.toBe("");
    }
  });
});

describe("the docs' commands, as a clone runs them", () => {
  it("call the CLI as npx scim-connector (a clone has no scim-connector on its PATH) and cite no file outside the repository", async () => {
    const files = [
      "README.md",
      ...(await readdir(path.join(ROOT, "docs"))).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
    ];
    const bare: string[] = [];
    const outside: string[] = [];
    for (const file of files) {
      const text = await doc(file);
      for (const [, block] of text.matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g))
        for (const line of block!.split("\n"))
          if (/^\s*scim-connector\s/.test(line)) bare.push(`${file}: ${line.trim()}`);
      if (/shared\/platform-granular\.md/.test(text)) outside.push(file);
    }
    expect(bare).toEqual([]);
    expect(outside).toEqual([]);
  });
});

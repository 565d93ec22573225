import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { freePort } from "../../src/db/embedded.js";
import { IDP_TOKEN, writeMappingFile } from "./stack.js";

/**
 * The connector as a real child process (`bin/scim-connector.js start`), for tests that kill,
 * restart or multiply it. Output is kept for failure messages.
 */
export type ConnectorProcess = {
  url: string;
  child: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
};

const ROOT = path.resolve(import.meta.dirname, "../..");

/** `port` keeps the address across restarts (an IdP pushes to one URL); a free one by default. */
export async function spawnConnector(env: Record<string, string>, port?: number): Promise<ConnectorProcess> {
  port ??= await freePort();
  let output = "";
  const child = spawn(process.execPath, [path.join(ROOT, "bin/scim-connector.js"), "start"], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: "test",
      LOG_LEVEL: "error",
      HOST: "127.0.0.1",
      PORT: String(port),
      RECONCILE_SETTLE_MS: "0",
      // No load balancer to wait for: a SIGTERM closes at once (test/ops/gracefulShutdown.test.ts sets its own).
      SHUTDOWN_DELAY_MS: "0",
      // Accounts are deleted at once unless a test is about the grace (it sets its own).
      RECONCILE_DEPROVISION_GRACE_MS: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`connector exited ${child.exitCode}:\n${output.slice(-2000)}`);
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`connector did not start:\n${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    output: () => output,
    async kill(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill(signal);
      await exited;
    },
  };
}

/**
 * The connector in SAML mode as a child process, with the test mapping and no reconcile workers
 * or resync: the setup of the security tests that sign in through SAML against a real process.
 */
export async function spawnSamlConnector(options: {
  databaseUrl: string;
  idpCert: string;
  issuer: string;
  callbackUrl: string;
}): Promise<ConnectorProcess> {
  const mappingFile = await writeMappingFile();
  return spawnConnector({
    DATABASE_URL: options.databaseUrl,
    SCIM_TOKEN: IDP_TOKEN,
    MAPPING_FILE: mappingFile,
    RECONCILE_WORKERS: "0",
    RESYNC_CRON: "off",
    SAML_ENTRY_POINT: "https://idp.example.test/sso",
    SAML_ISSUER: options.issuer,
    SAML_IDP_CERT: options.idpCert,
    SAML_CALLBACK_URL: options.callbackUrl,
  });
}

import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { freePort } from "../../src/db/embedded.js";

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

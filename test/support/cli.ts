import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import type { Stack } from "./stack.js";

export type CliResult = { code: number; stdout: string; stderr: string };

/**
 * `scim-connector <args>` as an operator runs it (bin/scim-connector.js in a child process), on a
 * stack's database and mapping file; a non-zero exit is a result, not a throw.
 */
export function runCli(
  stack: Pick<Stack, "database" | "mappingFile">,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  const root = path.resolve(import.meta.dirname, "../..");
  return promisify(execFile)(process.execPath, [path.join(root, "bin/scim-connector.js"), ...args], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: stack.database.url,
      MAPPING_FILE: stack.mappingFile,
      LOG_LEVEL: "error",
      ...env,
    },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: CliResult) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

/**
 * `scim-connector token <args>` as an operator runs it, on the database at `databaseUrl`: the
 * promise rejects with the exit code, stdout and stderr when the command fails.
 */
export function tokenCli(databaseUrl: string, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  const root = path.resolve(import.meta.dirname, "../..");
  return promisify(execFile)(process.execPath, [path.join(root, "bin/scim-connector.js"), "token", ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "error", NODE_ENV: "test" },
  });
}

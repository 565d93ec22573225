import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The vendors' conformance suites live beside the project (../shared/conformance), not in it.
 * In a user's clone they are absent and the conformance tests skip, saying so; under CI=true an
 * absent suite is a failure, so a broken checkout can never pass silently.
 */

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** SCIM_CONFORMANCE_DIR overrides the location (and lets the skip/fail behaviour itself be checked). */
export const conformanceDir = path.resolve(
  process.env.SCIM_CONFORMANCE_DIR ?? path.resolve(projectRoot, "../shared/conformance"),
);
export const suitesPresent = existsSync(conformanceDir);
export const mustRun = process.env.CI === "true";
export const projectBin = (name: string) => path.join(projectRoot, "node_modules/.bin", name);

const absent = `the conformance suites are not at ${conformanceDir} (they live beside the project, not in it)`;
export const skipMessage = `SKIPPED: ${absent}`;
export const ciFailure = `CI=true requires the conformance suites, but ${absent}`;

export type ProcessResult = { code: number; stdout: string; stderr: string };

export function run(command: string, args: string[], timeoutMs = 120_000): Promise<ProcessResult> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

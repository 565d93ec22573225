#!/usr/bin/env node
// Runs the built CLI when there is one (the Docker image, `npm run build`), else the TypeScript
// sources through tsx, so `npx scim-connector ...` works straight after `npm install`.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const built = join(root, "dist/src/cli/cli.js");
let cli;
if (existsSync(built)) {
  cli = await import(pathToFileURL(built).href);
} else {
  const { tsImport } = await import("tsx/esm/api");
  cli = await tsImport(pathToFileURL(join(root, "src/cli/cli.ts")).href, import.meta.url);
}
cli.runCli(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

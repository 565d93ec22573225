import { runCli } from "./cli/cli.js";

/** `node dist/main.js` (the Docker image) and `npm start`: the service with its embedded defaults. */
runCli(["start", ...process.argv.slice(2)]).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

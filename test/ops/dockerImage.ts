import { readFileSync } from "node:fs";
import path from "node:path";

/** What the Dockerfile's runtime stage gives every container of the image: its ENV and its CMD. */

const ROOT = path.resolve(import.meta.dirname, "../..");
const runtimeStage = () => {
  const dockerfile = readFileSync(path.join(ROOT, "Dockerfile"), "utf8");
  return dockerfile.slice(dockerfile.lastIndexOf("FROM "));
};

/** The runtime stage's ENV (the image's defaults, NODE_ENV=production among them). */
export function imageEnv(): Record<string, string> {
  const env = /^ENV ((?:.*\\\n)*.*)$/m.exec(runtimeStage())![1]!.replace(/\\\n/g, " ");
  return Object.fromEntries([...env.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

/** The runtime stage's CMD, in its exec form (`["node", "dist/main.js"]`). */
export function imageCommand(): string[] {
  return JSON.parse(/^CMD (\[.*\])$/m.exec(runtimeStage())![1]!) as string[];
}

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * package.json's `engines` promises Node versions; every package the lock file installs, the
 * development ones too (the README's `npm install` installs them), must run on each of them, or
 * `npm install` warns EBADENGINE on the Node we promise (canonicalize 5 and kubernetes-models 5
 * declare Node >= 22, where we promise ^20.19).
 */

const root = path.resolve(import.meta.dirname, "../..");
// semver has no types here; it comes with npm's own tree, and only its `subset` is used.
const semver = createRequire(import.meta.url)("semver") as { subset(sub: string, dom: string): boolean };

type LockedPackage = { version?: string; dev?: boolean; engines?: { node?: string } | string[] };
type Lock = { packages: Record<string, LockedPackage> };

describe("engines", () => {
  it("every package in package-lock.json, production and development, runs on each Node version package.json promises", () => {
    const lock = JSON.parse(readFileSync(path.join(root, "package-lock.json"), "utf8")) as Lock;
    const promised = (lock.packages[""]!.engines as { node: string }).node;
    const refusing = Object.entries(lock.packages)
      .filter(([name]) => name !== "")
      .flatMap(([name, entry]) => {
        const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        return node && !semver.subset(promised, node) ? [`${name}@${entry.version}: node ${node}`] : [];
      });
    expect(refusing, `package.json promises node ${promised}`).toEqual([]);
  });
});

// `npm run build [-- outDir]`: compiles src/ and migrations/ (tsconfig.build.json) into dist/
// and adds dist/main.js, the image's entry point (`node dist/main.js`). The compiler keeps the
// source layout (dist/src/..., dist/migrations/...) so that src/db/dataSource.ts finds the
// migrations at dist/migrations in a build exactly as it finds migrations/ in the sources.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const outDir = path.resolve(process.argv[2] ?? "dist");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
rmSync(outDir, { recursive: true, force: true }); // no stale files from removed sources
execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", outDir], { stdio: "inherit" });
writeFileSync(
  path.join(outDir, "main.js"),
  '// The built service: `node dist/main.js` (see src/main.ts).\nimport "./src/main.js";\n',
);
console.log(`built ${path.relative(process.cwd(), outDir) || "."}/main.js`);

// dependency-cruiser, in `npm run lint` (`npm run lint:deps`, scripts/lintDeps.mjs): the layers of
// docs/ARCHITECTURE.md ("Layers"), top to bottom, as rules: each layer imports nothing from a layer
// above it (one rule per layer, `layer-…`). test/ops/architecture.unit.test.ts checks that the
// document's diagram and this list say the same. Folders of one row may import each other; the
// circle checks below and in scripts/lintDeps.mjs keep them from going both ways.
// Only value imports are in the graph (tsPreCompilationDeps: false): a type-only import vanishes at
// run time and is not checked here.
const layers = [
  { name: "wiring", paths: ["src/cli/", "src/service/", "src/service.ts", "src/main.ts", "src/processGuards.ts"] },
  { name: "http", paths: ["src/http/"] },
  { name: "admin", paths: ["src/admin/"] },
  { name: "jobs", paths: ["src/jobs/"] },
  { name: "review", paths: ["src/review/", "src/metrics/"] },
  { name: "platformRecord", paths: ["src/platformRecord/"] },
  { name: "reconcile", paths: ["src/reconcile/", "src/mirror/"] },
  { name: "platform", paths: ["src/platform/", "src/emulator/"] },
  { name: "scim", paths: ["src/scim/", "src/notify/", "src/auth/"] },
  { name: "mapping", paths: ["src/mapping/"] },
  { name: "db", paths: ["src/db/", "src/backgroundLoop.ts"] },
  {
    name: "below-all",
    paths: [
      "src/vocabulary/",
      "src/errors.ts",
      "src/ids.ts",
      "src/clock.ts",
      "src/json.ts",
      "src/policy.ts",
      "src/scimAttributes.ts",
      "src/logging/",
      "src/config/",
    ],
  },
];

/** A regular expression matching the files of the given folders (`src/db/`) and files (`src/ids.ts`). */
const pathsOf = (entries) =>
  entries.map((entry) => `^${entry.replace(/\./g, "\\.")}${entry.endsWith("/") ? "" : "$"}`).join("|");

const layerRules = layers.slice(1).map((layer, index) => ({
  name: `layer-${layer.name}`,
  comment: `${layer.paths.join(" ")} import nothing from a layer above (docs/ARCHITECTURE.md, "Layers").`,
  severity: "error",
  from: { path: pathsOf(layer.paths) },
  to: { path: pathsOf(layers.slice(0, index + 1).flatMap((above) => above.paths)) },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: "no-folder-cycle",
      comment: "Two folders of src/ that import each other, directly or through others: a layer reaches back up.",
      severity: "error",
      scope: "folder",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      // The values; the types too are refused by ESLint (eslint.config.js) and the architecture test.
      name: "http-no-db",
      comment: "src/http calls front doors built in src/service (src/admin, src/scim, …), never src/db.",
      severity: "error",
      from: { path: "^src/http/" },
      to: { path: "^src/db/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: false,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js"] },
  },
};

// dependency-cruiser, in `npm run lint` (`npm run lint:deps`, scripts/lintDeps.mjs): the direction of
// docs/ARCHITECTURE.md, "Layers", checked on the folders of src/ (eslint's import-x/no-cycle sees only
// file-level circles). scripts/lintDeps.mjs adds the circle check among top-level folders, which the
// folder scope below cannot see (it takes src/admin/campaigns and src/admin for two folders).
//   src/http → application (src/admin, src/jobs, src/review, src/reconcile, …) → src/db → below all
// Type-only imports are allowed downward-facing exceptions: they vanish at run time.
// Every folder of src/ but src/db and those below it (config, logging; errors.ts, ids.ts, clock.ts,
// scimAttributes.ts at the root), and the root files that wire or run the application.
const above =
  "^src/(admin|auth|cli|emulator|http|jobs|mapping|metrics|mirror|notify|platform|platformRecord|reconcile|review|scim|service)/" +
  "|^src/(backgroundLoop|main|processGuards|service)\\.ts$";

module.exports = {
  forbidden: [
    {
      name: "no-folder-cycle",
      comment: "Two folders of src/ that import each other, directly or through others: a layer reaches back up.",
      severity: "error",
      scope: "folder",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "db-imports-nothing-above",
      comment:
        "src/db imports nothing above it except types: domain words and decisions live in the application layer.",
      severity: "error",
      from: { path: "^src/db/" },
      to: { path: above, dependencyTypesNot: ["type-only", "type-import"] },
    },
    {
      name: "http-no-db-values",
      comment: "src/http calls the application layer (src/admin, src/reconcile, …), never a repository: types only.",
      severity: "error",
      from: { path: "^src/http/" },
      to: { path: "^src/db/", dependencyTypesNot: ["type-only", "type-import"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: false,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js"] },
  },
};

// dependency-cruiser, in `npm run lint` (`npm run lint:deps`): the direction of docs/ARCHITECTURE.md,
// "Layers", checked on the folders of src/ (eslint's import-x/no-cycle sees only file-level circles).
//   src/http → application (src/admin, src/reconcile, src/mirror, src/jobs, src/notify, src/scim) → src/db
// Type-only imports are allowed downward-facing exceptions: they vanish at run time.
const above = "^src/(http|admin|reconcile|mirror|jobs|notify|scim|cli|service)/|^src/(service|main)\\.ts$";

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

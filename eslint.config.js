// ESLint (flat config), in CI through `npm run lint` (with knip for unused exports, files and
// dependencies, and prettier for the layout).
// - Everywhere: a promise nobody awaits, a promise where a callback's return is ignored, an unused
//   variable, and an import circle fail.
// - test/ and bench/: the house rules for tests: an expect that may not run, a test that asserts
//   nothing (expect, or a helper named in expect-expect), a skipped test and a misleading title fail.
import vitest from "@vitest/eslint-plugin";
import { defineConfig } from "eslint/config";
import importX from "eslint-plugin-import-x";
import tseslint from "typescript-eslint";

export default defineConfig(
  { ignores: ["dist/", "node_modules/", ".data/", "test-output/", "**/*.js", "**/*.mjs"] },
  {
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@typescript-eslint": tseslint.plugin, "import-x": importX },
    // Resolves `./x.js` to `./x.ts` (eslint-import-resolver-typescript), so import-x follows our imports.
    settings: importX.flatConfigs.typescript.settings,
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": [
        "error",
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      "import-x/no-cycle": "error",
    },
  },
  {
    // The boundaries of docs/ARCHITECTURE.md ("Layers"): TypeORM stays behind src/db's facade; admin
    // logic serves the HTTP layer and never the reverse; src/http imports nothing from src/db.
    files: ["**/*.ts", "**/*.tsx"],
    ignores: ["src/db/**", "migrations/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "typeorm", message: "TypeORM stays in src/db: use the Database facade (src/db/database.ts)." },
          ],
        },
      ],
    },
  },
  {
    files: ["src/admin/**/*.ts", "src/admin/**/*.tsx"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "typeorm", message: "TypeORM stays in src/db: use the Database facade (src/db/database.ts)." },
          ],
          patterns: [
            { group: ["**/http/**"], message: "src/admin serves the HTTP layer; it does not import from it." },
          ],
        },
      ],
    },
  },
  {
    // src/http → application (src/admin, src/reconcile, …) → src/db: a handler calls a front door
    // built once in src/service (createPlatformRecord, createEvidence, createCampaigns, …), never a
    // repository, and names no src/db type either: what it needs is typed where it is used. The folder-level
    // direction and cycles are dependency-cruiser's (.dependency-cruiser.cjs, also in `npm run lint`).
    // Nor does src/http build a stateful mechanism from the database handle (the failed-auth
    // throttles, the per-address allowance, the IdP-activity note) or hold SQL: the composition root
    // builds them once (src/service/http.ts httpMechanisms) and the readiness probe asks Database.ping().
    files: ["src/http/**/*.ts", "src/http/**/*.tsx"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "typeorm", message: "TypeORM stays in src/db: use the Database facade (src/db/database.ts)." },
          ],
          patterns: [
            {
              group: ["**/db/**"],
              message:
                "src/http calls the application layer (src/admin, src/scim, …), not src/db, not even for a type: take a front door built in src/service/http.ts, and its types from the module that owns it.",
            },
            {
              group: [
                "**/auth/authThrottle",
                "**/auth/authThrottle.js",
                "**/notify/conditions",
                "**/notify/conditions.js",
              ],
              allowTypeImports: true,
              message:
                "src/http builds no throttle, allowance or activity note from the database: take the one src/service/http.ts (httpMechanisms) builds, through createApp's deps. Types only here.",
            },
          ],
        },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "CallExpression[callee.property.name=/^(query|execute|prepared)$/][arguments.0.type=/^(Literal|TemplateLiteral)$/]",
          message:
            "No SQL in src/http: call a repository or use case (or a Database method such as ping()) wired in src/service/http.ts.",
        },
        {
          selector: "Literal[value=/^\\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\\s/]",
          message: "No SQL text in src/http: it lives in src/db.",
        },
        {
          selector: "TemplateElement[value.raw=/^\\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\\s/]",
          message: "No SQL text in src/http: it lives in src/db.",
        },
      ],
    },
  },
  {
    files: ["test/**/*.ts", "test/**/*.tsx", "bench/**/*.ts"],
    plugins: { vitest },
    // Typed: a title held in a string variable (table-driven tests) is a valid title.
    settings: { vitest: { typecheck: true } },
    rules: {
      "vitest/no-conditional-expect": "error",
      // expect itself and the helpers that call it, by name: not any name that starts with
      // expect or assert (assertionXml and expectedAccount assert nothing).
      "vitest/expect-expect": [
        "error",
        {
          assertFunctionNames: [
            "expect",
            "expectError",
            "expectRejected",
            "expectOk",
            "expectConverged",
            "expectPaused",
            "assertWorld",
          ],
        },
      ],
      "vitest/no-disabled-tests": "error",
      "vitest/valid-title": "error",
    },
  },
);

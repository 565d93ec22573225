// ESLint (flat config). Today it lints test/ only, with the house rules for tests: an expect that
// may not run, a test that asserts nothing, a skipped test, a misleading title and a promise
// nobody awaits all fail CI. The shared TypeScript block is ready for src/ (add it to `files`).
import vitest from "@vitest/eslint-plugin";
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";

const typescript = {
  languageOptions: {
    parser: tseslint.parser,
    parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
  },
  plugins: { "@typescript-eslint": tseslint.plugin },
};

export default defineConfig(
  { ignores: ["dist/", "node_modules/", ".data/", "test-output/"] },
  {
    files: ["test/**/*.ts", "test/**/*.tsx"],
    ...typescript,
    plugins: { ...typescript.plugins, vitest },
    // Typed: a title held in a string variable (table-driven tests) is a valid title.
    settings: { vitest: { typecheck: true } },
    rules: {
      "vitest/no-conditional-expect": "error",
      "vitest/expect-expect": ["error", { assertFunctionNames: ["expect", "expect*", "assert*"] }],
      "vitest/no-disabled-tests": "error",
      "vitest/valid-title": "error",
      "@typescript-eslint/no-floating-promises": "error",
    },
  },
);

import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCIM_TOKEN, startScimHarness, type ScimHarness } from "../support/scimHarness.js";
import { ciFailure, conformanceDir, mustRun, projectBin, run, skipMessage, suitesPresent } from "./suites.js";

const FOLDERS = [
  "Endpoint tests",
  "User tests",
  "Group tests",
  "ComplexAttribute tests",
  "User tests with garbage",
  "Group tests with garbage",
  "Teardown garbage",
];

/**
 * The collection's own quirks that this server deliberately does not follow (docs/entra.md says
 * why): a non-standard /serviceConfiguration path, and filters with unquoted values, which
 * RFC 7644 3.4.2.2 does not allow and the server answers with 400 invalidFilter.
 */
const DOCUMENTED_QUIRKS = [
  "Get ServiceProviderConfig / Status code is 200",
  "Get ServiceProviderConfig / Pach supported is true",
  "filter eq and (val or val) / Total results",
  "filter starts with / Total results",
  "filter greater than / Total results",
];

type Report = {
  run: {
    executions: { item: { name: string }; assertions?: { assertion: string; error?: { message: string } }[] }[];
  };
};

describe(
  suitesPresent ? "Microsoft SCIMReferenceCode Postman collection" : `Microsoft SCIM collection (${skipMessage})`,
  () => {
    if (!suitesPresent) {
      if (mustRun) it("finds the conformance suites under CI=true", () => expect.fail(ciFailure));
      // eslint-disable-next-line vitest/no-disabled-tests -- the suites are fetched for CI; outside CI their absence is reported as a skip
      else it.skip(skipMessage, () => undefined);
      return;
    }

    let h: ScimHarness;
    let dir: string;
    beforeAll(async () => {
      h = await startScimHarness();
      dir = await mkdtemp(path.join(os.tmpdir(), "scim-newman-"));
    });
    afterAll(async () => {
      await h?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("passes every assertion except the collection's documented quirks, against an empty store", async () => {
      const port = new URL(h.service.url).port;
      const reportFile = path.join(dir, "report.json");
      const args = ["run", path.join(conformanceDir, "microsoft/PostmanCollection.json")];
      for (const [name, value] of Object.entries({
        Protocol: "http",
        Server: "127.0.0.1",
        Port: `:${port}`,
        Api: "scim/v2",
        token: SCIM_TOKEN,
      })) {
        args.push("--env-var", `${name}=${value}`);
      }
      for (const folder of FOLDERS) args.push("--folder", folder);
      args.push("--reporters", "json", "--reporter-json-export", reportFile, "--disable-unicode");
      const result = await run(projectBin("newman"), args, 180_000);
      const report = JSON.parse(await readFile(reportFile, "utf8")) as Report;

      const assertions = report.run.executions.flatMap((e) =>
        (e.assertions ?? []).map((a) => ({ name: `${e.item.name} / ${a.assertion}`, error: a.error?.message })),
      );
      const failed = assertions.filter((a) => a.error).map((a) => a.name);
      console.info(
        `Microsoft collection: ${assertions.length} assertions, ${assertions.length - failed.length} passed, ${failed.length} failed (documented quirks: ${DOCUMENTED_QUIRKS.length})`,
      );
      expect(assertions.length, result.stderr).toBeGreaterThan(90);
      expect(failed.sort()).toEqual([...DOCUMENTED_QUIRKS].sort());
    }, 240_000);
  },
);

import { describe, expect, inject, it } from "vitest";
import { openDatabase } from "../../src/db/dataSource.js";
import { freePort } from "../../src/db/embedded.js";
import { withDatabase } from "../support/globalSetup.js";

/**
 * A database the service cannot reach stops the boot with what to check, naming DATABASE_URL and
 * the address tried without its password (issue 47, item 7), instead of pg's bare
 * "connect ECONNREFUSED 127.0.0.1:1".
 */
describe("a database that cannot be reached", () => {
  const open = (url: string) => openDatabase({ url, poolSize: 1, applicationName: "scim-connector-test" });

  it("names DATABASE_URL, the address without its password, and that nothing listens there", async () => {
    const port = await freePort();
    const failure = await open(`postgres://scim:hunter2-secret@127.0.0.1:${port}/scim`).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toContain("DATABASE_URL");
    expect(failure?.message).toContain(`postgres://scim:***@127.0.0.1:${port}/scim`);
    expect(failure?.message).toContain("ECONNREFUSED");
    expect(failure?.message).toContain("check that PostgreSQL runs and listens there");
    expect(failure?.message).not.toContain("hunter2-secret");
  });

  it("says which of the URL's parts PostgreSQL refused: a database that does not exist", async () => {
    const url = withDatabase(inject("adminDatabaseUrl"), "no_such_database_here");
    const failure = await open(url).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toContain("(3D000)");
    expect(failure?.message).toContain("the database does not exist");
  });
});

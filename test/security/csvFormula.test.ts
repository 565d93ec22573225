import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { ADMIN_TOKEN, IDP_TOKEN, writeMappingFile } from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * An IdP group whose name carries a formula after a `;` (the list separator of many European
 * spreadsheet locales), matched by the test mapping's `groupPattern: "^Analysts-"`, reaches the
 * access export of the connector running as a real child process (with its embedded emulator
 * and workers): its cell is quoted, and the formula after the `;` is prefixed with '.
 */

const GROUP = "Analysts-Mktg;=1+1;";

describe("a formula in an IdP group's name is neither split out nor run from the access export", () => {
  let database: TestDatabase;
  let connector: ConnectorProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    const mappingFile = await writeMappingFile();
    connector = await spawnConnector({
      DATABASE_URL: database.url,
      SCIM_TOKEN: IDP_TOKEN,
      ADMIN_TOKEN,
      MAPPING_FILE: mappingFile,
      RESYNC_CRON: "off",
    });
  }, 90_000);
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await database?.drop();
  });

  const scim = async (method: string, target: string, body: unknown) => {
    const res = await fetch(`${connector!.url}/scim/v2${target}`, {
      method,
      headers: { Authorization: `Bearer ${IDP_TOKEN}`, "Content-Type": "application/scim+json" },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as { id: string };
  };

  it("the groups cell is quoted and the piece after ; starts with '", { timeout: 60_000 }, async () => {
    const user = await scim("POST", "/Users", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: "ana@example.com",
      name: { givenName: "Ana", familyName: "Lyst" },
      emails: [{ value: "ana@example.com", primary: true }],
      active: true,
    });
    await scim("POST", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: GROUP,
      members: [{ value: user.id }],
    });
    const line = await eventually("the analyst's export_user_data grant in the export", async () => {
      const csv = await fetch(`${connector!.url}/admin/api/access?format=csv`, {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      }).then((r) => r.text());
      return csv.split("\r\n").find((l) => l.includes("export_user_data"));
    });
    expect(line).toContain(`"Analysts-Mktg;'=1+1;"`);
    // Every cell quoted: split on the quoted separator, nothing is left outside quotes.
    expect(line.startsWith('"') && line.endsWith('"')).toBe(true);
    expect(
      line
        .slice(1, -1)
        .split('","')
        .every((cell) => !/(^|[^"])"($|[^"])/.test(cell)),
    ).toBe(true);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSamlConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { rawClient } from "../support/fuzz.js";
import { authnRequestIdFromRedirect, encodeResponse, makeIdpKeys, signedResponse } from "../support/saml.js";
import { IDP_TOKEN } from "../support/stack.js";
import { ACS, SP_ENTITY } from "../support/constants.js";

/**
 * One request must never stop the process. The connector runs as a real child process in SAML
 * mode; a signed-in-able SAMLResponse is sent as a form body on GET /admin/saml/login (the route
 * that only starts a login). That used to reach passport-saml's `authenticate`, whose success
 * callback was missing on the login route: the throw happened in a discarded promise and the
 * unhandled rejection ended the process, SCIM and all. Afterwards the SAME process must still
 * serve SCIM and /readyz.
 */

describe("a crafted SAML request cannot stop the process", () => {
  let database: TestDatabase;
  let connector: ConnectorProcess | undefined;
  const idp = makeIdpKeys("crash-idp");

  beforeAll(async () => {
    database = await createTestDatabase();
    connector = await spawnSamlConnector({
      databaseUrl: database.url,
      idpCert: idp.cert,
      issuer: SP_ENTITY,
      callbackUrl: ACS,
    });
  }, 90_000);
  afterAll(async () => {
    await connector?.kill("SIGKILL");
    await database?.drop();
  });

  it(
    "GET /admin/saml/login with a valid signed SAMLResponse as a form body: the same process still serves SCIM and /readyz",
    { timeout: 60_000 },
    async () => {
      const c = connector!;
      const started = await fetch(`${c.url}/admin/saml/login`, { redirect: "manual" });
      expect(started.status).toBe(302);
      const inResponseTo = authnRequestIdFromRedirect(started.headers.get("location")!);
      const samlResponse = encodeResponse(
        signedResponse(
          { inResponseTo, acsUrl: ACS, audience: SP_ENTITY, nameId: "mallory@example.com", role: "admin" },
          idp,
        ),
      );

      // fetch refuses a body on GET; node:http sends whatever it is given.
      const client = rawClient(c.url, 1);
      const crafted = await client
        .send({
          method: "GET",
          path: "/admin/saml/login",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ SAMLResponse: samlResponse }).toString(),
        })
        .catch((error: Error) => ({ status: 0, body: Buffer.from(error.message) }));
      client.close();
      // Whatever the answer, it is not a stack and it starts no session.
      expect(crafted.body.toString("utf8")).not.toMatch(/\n\s+at .+:\d+:\d+/);

      // The process is still the same one, and it serves.
      const scim = await fetch(`${c.url}/scim/v2/Users?count=1`, {
        headers: { Authorization: `Bearer ${IDP_TOKEN}` },
      }).catch((error: Error) => error);
      expect(scim instanceof Error ? scim.message : scim.status, c.output().slice(-2000)).toBe(200);
      expect(c.child.exitCode).toBeNull();
      expect(c.child.signalCode).toBeNull();
      expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
    },
  );
});

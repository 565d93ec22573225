import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSamlConnector, type ConnectorProcess } from "../support/connectorProcess.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { authnRequestIdFromRedirect, encodeResponse, makeIdpKeys, signedResponse } from "../support/saml.js";
import { ACS, SP_ENTITY } from "../support/constants.js";

/**
 * Everyone behind one office NAT or ingress shares an address. 50 single sign-on starts from it
 * (abandoned: the crowd, or someone in it on purpose) must not stop an admin behind the same
 * address from completing a sign-in. The connector runs in SAML mode as a real child process
 * with the default allowance (30 starts per address per minute); every request here comes from
 * the same loopback address.
 */

const cookiesOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");

describe("a crowd behind one address cannot lock its admins out of single sign-on", () => {
  let database: TestDatabase;
  let connector: ConnectorProcess | undefined;
  const idp = makeIdpKeys("crowd-idp");

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

  it("after 50 abandoned starts from the address, an admin there signs in", { timeout: 60_000 }, async () => {
    const c = connector!;
    for (let n = 0; n < 50; n++) {
      const start = await fetch(`${c.url}/admin/saml/login`, { redirect: "manual" });
      await start.body?.cancel();
    }
    const stored = Number(
      (await database.db.query<{ n: string }>(`SELECT count(*) AS n FROM saml_authn_requests`))[0]!.n,
    );
    expect(stored).toBeLessThanOrEqual(30); // the allowance still bounds what anonymous starts store

    const start = await fetch(`${c.url}/admin/saml/login`, { redirect: "manual" });
    expect(start.status, await start.clone().text()).toBe(302);
    const inResponseTo = authnRequestIdFromRedirect(start.headers.get("location")!);
    const samlResponse = encodeResponse(
      signedResponse(
        { inResponseTo, acsUrl: ACS, audience: SP_ENTITY, nameId: "admin@example.com", role: "admin" },
        idp,
      ),
    );
    const acs = await fetch(`${c.url}/admin/saml/acs`, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: cookiesOf(start), "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ SAMLResponse: samlResponse }),
    });
    expect(acs.status, await acs.clone().text()).toBe(303);
    const home = await fetch(`${c.url}/admin`, { headers: { Cookie: cookiesOf(acs) } });
    expect(home.status).toBe(200);
    expect(await home.text()).toContain("admin@example.com");

    // The same response again is refused: a signed id is still used once.
    const replay = await fetch(`${c.url}/admin/saml/acs`, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: cookiesOf(start), "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ SAMLResponse: samlResponse }),
    });
    expect(replay.status).toBe(401);
  });
});

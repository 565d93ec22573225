import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { JWT_BEARER } from "../../src/auth/oauth/tokenService.js";
import { ManualClock } from "../../src/clock.js";
import { startLocalIssuer, type LocalIssuer } from "../support/oauthIssuer.js";
import { emulatorState, startStack, type Stack } from "../support/stack.js";

/**
 * End to end, as Entra's workload identity federation runs: a signed assertion from the (local)
 * issuer → an access token from /oauth/token → SCIM writes with it → the token expires on the
 * injectable clock mid-run (the next write gets 401) → a new assertion, a new token, the refused
 * write sent again. No write is lost or doubled: the connector holds every user and membership
 * once, and the platform (the emulator) ends with every account. Then the IdP falls silent for
 * more than IDP_SILENCE_HOURS (24) on the clock, and idp.silent opens.
 */
describe("Entra-style OAuth provisioning across a token expiry", () => {
  let stack: Stack;
  let issuer: LocalIssuer;
  const clock = new ManualClock();

  beforeAll(async () => {
    issuer = await startLocalIssuer(clock);
    stack = await startStack({ clock, env: { ...issuer.env(), OAUTH_ACCESS_TOKEN_MINUTES: "60" } });
  });
  afterAll(async () => {
    await stack?.close();
    await issuer?.close();
  });

  it("assertion → token → writes → expiry → new token, with every write applied once", async () => {
    const tokensIssued: string[] = [];
    const newToken = async () => {
      const res = await request(stack.service.url)
        .post("/oauth/token")
        .type("form")
        .send({
          grant_type: "client_credentials",
          client_id: "entra-wif",
          client_assertion_type: JWT_BEARER,
          client_assertion: await issuer.assertion(),
          scope: "scim",
        });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      tokensIssued.push(res.body.access_token as string);
      return res.body.access_token as string;
    };
    let token = await newToken();
    const refusals: string[] = [];
    /** What Entra's provisioning service does: a 401 means a new token, then the same request again. */
    const send = async (method: "post" | "patch" | "get", path: string, body?: unknown) => {
      for (let attempt = 0; attempt < 2; attempt++) {
        const req = request(stack.service.url)[method](`/scim/v2${path}`).set("Authorization", `Bearer ${token}`);
        const res =
          body === undefined
            ? await req
            : await req.set("Content-Type", "application/scim+json").send(JSON.stringify(body));
        if (res.status !== 401) return res;
        refusals.push(`${method} ${path}`);
        token = await newToken();
      }
      throw new Error(`${method} ${path}: refused with a fresh token`);
    };

    const group = await send("post", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "Marketing",
    });
    expect(group.status).toBe(201);
    const userNames = Array.from({ length: 10 }, (_, i) => `wif-user-${i}@example.com`);
    for (const [i, userName] of userNames.entries()) {
      if (i === 5) clock.advance(61 * 60_000); // the first token's hour is over
      const created = await send("post", "/Users", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName,
        name: { givenName: `User${i}`, familyName: "Wif" },
        emails: [{ value: userName, type: "work", primary: true }],
        active: true,
      });
      expect(created.status, created.text).toBe(201);
      const added = await send("patch", `/Groups/${group.body.id}`, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "add", path: "members", value: [{ value: created.body.id }] }],
      });
      expect(added.status, added.text).toBeLessThan(300);
    }

    expect(refusals).toEqual(["post /Users"]); // exactly the first write after the expiry, once
    expect(tokensIssued).toHaveLength(2);
    expect(
      (await request(stack.service.url).get("/scim/v2/Users").set("Authorization", `Bearer ${tokensIssued[0]}`)).status,
    ).toBe(401);

    const listed = await send("get", "/Users?count=100");
    expect(listed.body.totalResults).toBe(10);
    expect(listed.body.Resources.map((u: { userName: string }) => u.userName).sort()).toEqual([...userNames].sort());
    const members = await send("get", `/Groups/${group.body.id}`);
    expect(members.body.members).toHaveLength(10);

    // The platform ends with every account (the reconciler runs on the same clock).
    const onPlatform = await vi.waitFor(
      async () => {
        const names = (await emulatorState(stack)).dashboardUsers
          .map((u) => u.userName)
          .filter((n) => n.startsWith("wif-user-"));
        if (names.length < 10) throw new Error(`${names.length} of 10 on the platform`);
        return names;
      },
      { timeout: 30_000, interval: 200 },
    );
    expect(onPlatform.sort()).toEqual([...userNames].sort());

    // An IdP that provisioned with access tokens and then falls silent is told of, as with a bearer token.
    clock.advance(25 * 3_600_000);
    await vi.waitFor(
      async () => {
        const open: unknown[] = await stack.database.db.query(
          `SELECT 1 FROM notification_incidents WHERE key = 'idp.silent' AND resolved_at IS NULL`,
        );
        if (open.length !== 1) throw new Error("no idp.silent incident yet");
      },
      { timeout: 20_000, interval: 200 },
    );
  }, 90_000);
});

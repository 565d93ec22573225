import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MATCH_TIME_LIMIT_MS } from "../../src/mapping/groupPattern.js";
import { csrfFrom } from "../support/adminHarness.js";
import { runCli } from "../support/cli.js";
import { ACS, SP_ENTITY } from "../support/constants.js";
import { TEST_MAPPING } from "../support/mapping.js";
import {
  authnRequestIdFromRedirect,
  encodeResponse,
  makeIdpKeys,
  samlLoginCookie,
  signedResponse,
} from "../support/saml.js";
import { idp, startStack, writeMappingFile, type Stack } from "../support/stack.js";

/**
 * Issue 45, security 1: a mapping draft's groupPattern ran on the event loop against every group
 * name, and any signed-in viewer could post one: `^(.*){11}#$` stalled SCIM, /oauth/token and the
 * admin UI for seconds. Now the preview needs the admin's action, the catastrophic shapes are
 * refused wherever a mapping is read (naming the pattern and its line), and a pattern that passes
 * those checks but is slow still cannot hold the event loop (src/mapping/groupPattern.ts).
 */

const CATASTROPHIC = "^(.*){11}#$";
/** No nested repetition, so it loads; eight `.*` in a row take seconds on a 40-character name that fails at the end. */
const POLYNOMIAL = `^${".*".repeat(8)}#$`;
const LONG_GROUP = "x".repeat(40);

const withPattern = (pattern: string) => TEST_MAPPING.replace('"^Analysts-"', JSON.stringify(pattern));
const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

describe("a mapping's groupPattern cannot freeze a replica", () => {
  let stack: Stack;
  const keys = makeIdpKeys("pattern-idp");

  beforeAll(async () => {
    stack = await startStack({
      env: {
        RECONCILE_WORKERS: "0",
        SAML_ENTRY_POINT: "https://idp.example.test/sso",
        SAML_ISSUER: SP_ENTITY,
        SAML_IDP_CERT: keys.cert,
        SAML_CALLBACK_URL: ACS,
        SAML_ROLE_ATTRIBUTE: "groups",
        SAML_ADMIN_VALUES: "scim-admins",
        SAML_VIEWER_VALUES: "scim-viewers",
        SAML_LOGIN_PER_ADDRESS_PER_MINUTE: "1000",
      },
    });
    // Three users whose group names almost match: what made the pattern backtrack for seconds.
    const scim = idp(stack);
    const users = [];
    for (const name of ["a", "b", "c"]) users.push(await scim.createUser(`${name}@example.com`));
    await scim.createGroup(LONG_GROUP, users);
  });
  afterAll(async () => stack?.close());

  /** Signs in over SAML with `role`; the agent and the mapping page's CSRF token. */
  async function signIn(role: "scim-admins" | "scim-viewers") {
    const agent = request.agent(stack.service.url);
    const started = await agent.get("/admin/saml/login");
    const inResponseTo = authnRequestIdFromRedirect(started.headers.location!);
    const acs = await agent
      .post("/admin/saml/acs")
      .set({ Cookie: samlLoginCookie(started) })
      .type("form")
      .send({
        SAMLResponse: encodeResponse(
          signedResponse(
            {
              inResponseTo,
              acsUrl: ACS,
              audience: SP_ENTITY,
              nameId: `${role}@example.com`,
              role,
              roleAttribute: "groups",
            },
            keys,
          ),
        ),
      });
    expect(acs.status).toBe(303);
    const page = await agent.get("/admin/mapping");
    expect(page.status).toBe(200);
    return { agent, csrf: csrfFrom(page.text), page: page.text };
  }

  it("a viewer may not preview a draft: 403, and the page offers no preview form", async () => {
    const viewer = await signIn("scim-viewers");
    expect(viewer.page).not.toContain('action="/admin/mapping/preview"');
    const res = await viewer.agent
      .post("/admin/mapping/preview")
      .type("form")
      .send({ _csrf: viewer.csrf, draft: withPattern(CATASTROPHIC) });
    expect(res.status).toBe(403);
    expect(res.text).toContain("cannot preview mapping drafts");
  });

  it("an admin's draft with a catastrophic pattern is a 400 naming the pattern and its line", async () => {
    const admin = await signIn("scim-admins");
    const draft = withPattern(CATASTROPHIC);
    const res = await admin.agent.post("/admin/mapping/preview").type("form").send({ _csrf: admin.csrf, draft });
    expect(res.status).toBe(400);
    expect(res.text).toContain(`draft:${lineOf(draft, "groupPattern")}:`);
    expect(res.text).toContain(`groupPattern '${CATASTROPHIC}' is refused: a repeated group repeats inside`);
  });

  it("a mapping file with it is refused at load (`mapping check`, as at boot and reload), naming the line", async () => {
    const text = withPattern(CATASTROPHIC);
    const file = await writeMappingFile(text);
    const result = await runCli(stack, ["mapping", "check", file]);
    expect(result.code).not.toBe(0);
    expect(result.stderr + result.stdout).toContain(
      `${file}:${lineOf(text, "groupPattern")}:19: groupPattern '${CATASTROPHIC}' is refused`,
    );
  });

  it("a slow pattern that loads is stopped by its time limit: the event loop keeps turning, the draft is a 400 naming it", async () => {
    const admin = await signIn("scim-admins");
    // A timer that should fire every 10 ms: its largest gap is how long the event loop was held.
    let last = performance.now();
    let longestGap = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 10);
    const health = request(stack.service.url).get("/healthz");
    const preview = admin.agent
      .post("/admin/mapping/preview")
      .type("form")
      .send({ _csrf: admin.csrf, draft: withPattern(POLYNOMIAL) });
    const [res, served] = await Promise.all([preview, health]).finally(() => clearInterval(ticker));
    expect(served.status).toBe(200);
    expect(res.status).toBe(400);
    expect(res.text).toContain(`groupPattern '${POLYNOMIAL}' took longer than ${MATCH_TIME_LIMIT_MS} ms`);
    // Unbounded, this one test holds the loop for seconds; the limit, plus the machine's noise.
    expect(longestGap).toBeLessThan(1_000);
  });
});

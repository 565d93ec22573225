import { generateKeyPairSync } from "node:crypto";
import { Readable } from "node:stream";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyEvidencePack } from "../../src/review/evidence/pack.js";
import { csrfFrom } from "../support/adminHarness.js";
import {
  authnRequestIdFromRedirect,
  encodeResponse,
  makeIdpKeys,
  samlLoginCookie,
  signedResponse,
  type IdpKeys,
} from "../support/saml.js";
import { ADMIN_TOKEN, emulatorState, idp, startStack, type Stack } from "../support/stack.js";
import { euPermissions, TWO_WORKSPACES_MAPPING } from "../support/campaigns.js";
import { eventually } from "../support/wait.js";
import { ACS, SP_ENTITY } from "../support/constants.js";

/**
 * The campaign pages over HTTP (docs/access-review.md, "Campaigns"), with SAML sign-in, the
 * emulator and the workers running: a viewer reviews only their items, the refusals (no CSRF token,
 * another reviewer's item, a revoke without a comment) decide nothing, a revoke made on the page
 * leaves the platform, and the deny shows on the access review's rows and export. Admins close
 * campaigns, lift denies and download the evidence pack from the Access review page.
 */

type Item = { id: string; userName: string; permission: string; decision: string | null };

describe("the campaign pages over HTTP", () => {
  let stack: Stack;
  let keys: IdpKeys;
  let campaignId: string;
  /** A moment the deny was in force (read back as of then once it is lifted). */
  let afterRevoke: string;
  const evidenceKey = generateKeyPairSync("ed25519");

  const api = (path: string) =>
    request(stack.service.url).get(`/admin/api${path}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`);
  const items = async (as: string) =>
    (await api(`/campaigns/${campaignId}/items?reviewer=all&limit=100`)).body.items.filter(
      (i: Item & { reviewer: string }) => i.reviewer === `name:${as}`,
    ) as Item[];

  /** Signs in through the SAML ACS as `nameId` with the role value given; answers the agent and a page's CSRF token. */
  async function signIn(nameId: string, role: "scim-admins" | "scim-viewers") {
    const agent = request.agent(stack.service.url);
    const login = await agent.get("/admin/saml/login");
    const inResponseTo = authnRequestIdFromRedirect(login.headers.location!);
    const acs = await agent
      .post("/admin/saml/acs")
      .set({ Cookie: samlLoginCookie(login) })
      .type("form")
      .send({
        SAMLResponse: encodeResponse(
          signedResponse(
            { inResponseTo, acsUrl: ACS, audience: SP_ENTITY, nameId, role, roleAttribute: "groups" },
            keys,
          ),
        ),
      });
    expect(acs.status).toBe(303);
    const page = await agent.get("/admin/campaigns");
    expect(page.status).toBe(200);
    return { agent, csrf: csrfFrom(page.text) };
  }

  beforeAll(async () => {
    keys = makeIdpKeys("test-idp");
    stack = await startStack({
      mapping: TWO_WORKSPACES_MAPPING,
      env: {
        RECONCILE_POLL_MS: "50",
        SAML_ENTRY_POINT: "https://idp.example.test/sso",
        SAML_ISSUER: SP_ENTITY,
        SAML_IDP_CERT: keys.cert,
        SAML_CALLBACK_URL: ACS,
        SAML_ROLE_ATTRIBUTE: "groups",
        SAML_ADMIN_VALUES: "scim-admins",
        SAML_VIEWER_VALUES: "scim-viewers",
        SAML_IDP_ISSUER: "https://idp.example.test",
        SAML_LOGIN_PER_ADDRESS_PER_MINUTE: "1000",
        EVIDENCE_SIGNING_KEY: evidenceKey.privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
      },
    });
    const scim = idp(stack);
    const alice = await scim.createUser("alice@example.com");
    const bob = await scim.createUser("bob@example.com");
    await scim.createGroup("Marketing", [alice]);
    await scim.createGroup("Sales", [bob]);
    await eventually("two accounts with their workspaces", async () => {
      const held = (await emulatorState(stack)).dashboardUsers;
      return held.length === 2 && held.every((u) => u.permissions.appGroup.length > 0);
    });
  });
  afterAll(async () => stack?.close());

  it("an admin starts a campaign from the Campaigns page's form, and it is listed with its counts", async () => {
    const { agent, csrf } = await signIn("ada@example.com", "scim-admins");
    const form = await agent.get("/admin/campaigns");
    expect(form.text).toContain("Start a campaign");
    const due = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 16);
    const started = await agent.post("/admin/campaigns").type("form").send({
      _csrf: csrf,
      name: "Q4 review",
      scope: "everything",
      scopeValue: "",
      dueAt: due,
      reviewers: "EU Production = vic@example.com\r\nUS Production = uma@example.com",
      fallbackReviewer: "security@example.com",
    });
    expect(started.status).toBe(303);
    campaignId = /\/admin\/campaigns\/([0-9a-f-]{36})$/.exec(started.headers.location!)![1]!;
    expect((await api(`/campaigns/${campaignId}`)).body).toMatchObject({
      name: "Q4 review",
      dueAt: `${due}:00.000Z`,
      counts: { items: 4, open: 4 },
    });
    const list = await agent.get("/admin/campaigns");
    expect(list.text).toContain(`href="/admin/campaigns/${campaignId}"`);
    expect(list.text).toMatch(/Q4 review.*everything/s);

    // A viewer sees the list but gets no start form, and cannot post one.
    const viewer = await signIn("vic@example.com", "scim-viewers");
    expect((await viewer.agent.get("/admin/campaigns")).text).not.toContain("Start a campaign");
    const refused = await viewer.agent
      .post("/admin/campaigns")
      .type("form")
      .send({ _csrf: viewer.csrf, name: "x", scope: "everything", dueAt: due, fallbackReviewer: "v" });
    expect(refused.status).toBe(403);
    expect((await api("/campaigns")).body.campaigns).toHaveLength(1);
  });

  it("a viewer sees only their items; a post without the CSRF token, on another reviewer's item, or a revoke without a comment decides nothing", async () => {
    const { agent, csrf } = await signIn("vic@example.com", "scim-viewers");
    const page = await agent.get(`/admin/campaigns/${campaignId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("alice@example.com");
    expect(page.text).not.toContain("bob@example.com");
    // The counts are the reviewer's own items (the page never counts the whole campaign for them).
    expect(page.text).toContain("<dt>Items to review</dt><dd>2: 2 open, 0 kept, 0 revoked</dd>");
    // No reviewer filter for a viewer, and every reviewer's items are refused to them.
    expect(page.text).not.toContain('name="reviewer"');
    expect((await agent.get(`/admin/campaigns/${campaignId}?reviewer=all`)).status).toBe(403);

    const vic = await items("vic@example.com");
    const uma = await items("uma@example.com");
    expect(vic.map((i) => i.userName)).toEqual(["alice@example.com", "alice@example.com"]);

    const noToken = await agent.post(`/admin/campaigns/${campaignId}/keep`).type("form").send({ item: vic[0]!.id });
    expect(noToken.status).toBe(403);
    const foreign = await agent
      .post(`/admin/campaigns/${campaignId}/keep`)
      .type("form")
      .send({ _csrf: csrf, item: [vic[0]!.id, uma[0]!.id] });
    expect(foreign.status).toBe(403);
    expect(foreign.text).toContain("for another reviewer");
    const noComment = await agent
      .post(`/admin/campaigns/${campaignId}/revoke`)
      .type("form")
      .send({ _csrf: csrf, item: vic[1]!.id, comment: "   " });
    expect(noComment.status).toBe(400);
    expect(noComment.text).toContain("a revoke needs a comment");

    // Bad input is a clear 4xx page, never a 500.
    for (const [path, status] of [
      [`/admin/campaigns/${campaignId}?cursor=abc`, 400],
      [`/admin/campaigns/${campaignId}?decision=maybe`, 400],
      [`/admin/campaigns/${campaignId}?reviewer=name%3A`, 400],
      ["/admin/campaigns/not-a-campaign", 404],
    ] as const)
      expect([path, (await agent.get(path)).status]).toEqual([path, status]);
    for (const item of ["abc", "1".repeat(19)]) {
      const bad = await agent.post(`/admin/campaigns/${campaignId}/keep`).type("form").send({ _csrf: csrf, item });
      expect([item, bad.status]).toEqual([item, 400]);
    }
    expect(
      (await agent.post("/admin/campaigns/not-a-campaign/keep").type("form").send({ _csrf: csrf, item: "1" })).status,
    ).toBe(404);

    expect((await api(`/campaigns/${campaignId}`)).body.counts).toMatchObject({ open: 4, kept: 0, revoked: 0 });
    expect((await api("/denies")).body.denies).toEqual([]);
  });

  it("a viewer keeps one item and revokes the other with a comment; the grant leaves the platform and the deny shows on the access review", async () => {
    const { agent, csrf } = await signIn("vic@example.com", "scim-viewers");
    const vic = await items("vic@example.com");
    const basic = vic.find((i) => i.permission === "basic_access")!;
    const canvases = vic.find((i) => i.permission === "send_campaigns_canvases")!;
    const kept = await agent
      .post(`/admin/campaigns/${campaignId}/keep`)
      .type("form")
      .send({ _csrf: csrf, item: [basic.id], filters: "decision=open&evil=1" });
    expect(kept.status).toBe(303);
    expect(kept.headers.location).toBe(`/admin/campaigns/${campaignId}?decision=open`);
    const revoked = await agent
      .post(`/admin/campaigns/${campaignId}/revoke`)
      .type("form")
      .send({ _csrf: csrf, item: canvases.id, comment: "moved to the data team" });
    expect(revoked.status).toBe(303);
    expect((await agent.get(revoked.headers.location!)).text).toContain("Revoked 1 item.");
    afterRevoke = new Date().toISOString();

    await eventually("the revoke on the platform", async () =>
      (await euPermissions(stack, "alice@example.com")).every((p) => p !== "send_campaigns_canvases"),
    );
    expect(await euPermissions(stack, "alice@example.com")).toEqual(["basic_access"]);
    expect((await api(`/campaigns/${campaignId}`)).body.counts).toMatchObject({ open: 2, kept: 1, revoked: 1 });

    // The access review: the denied grant on its row, in words; the export's added `denied` column.
    const access = await agent.get("/admin/access?user=alice");
    expect(access.status).toBe(200);
    expect(access.text).toMatch(
      /send_campaigns_canvases<\/code>.*revoked in campaign &quot;Q4 review&quot;, by vic@example.com, on /s,
    );
    const csv = (await agent.get("/admin/access/export.csv?user=alice")).text.trim().split("\r\n");
    expect(csv[0]).toBe(
      "userName,scope,workspace,team,permission,groups,rules,permissions,count,lastSignInAt,suspended,grantedOutside,firstAppliedAt,appliedByLogId,verified,reasonsAsOf,denied",
    );
    const deniedLine = csv.find((l) => l.includes("send_campaigns_canvases"))!;
    expect(deniedLine).toMatch(
      /"revoked in campaign ""Q4 review"", by vic@example.com, on \d{4}-\d{2}-\d{2}T[^"]*: moved to the data team"$/,
    );
    expect(csv.find((l) => l.includes('"basic_access"'))).toMatch(/,""$/);
    const json = (await agent.get("/admin/access/export.json?user=alice")).body as {
      permission: string;
      deny: { campaignName: string; decidedBy: string; onPlatform: boolean } | null;
    }[];
    expect(json.find((r) => r.permission === "send_campaigns_canvases")!.deny).toMatchObject({
      campaignName: "Q4 review",
      decidedBy: "vic@example.com",
      onPlatform: false,
    });
    expect(json.find((r) => r.permission === "basic_access")!.deny).toBeNull();
  });

  it("an admin sees every reviewer's items, filters by reviewer, lifts the deny and closes the campaign; a viewer can do neither", async () => {
    const viewer = await signIn("vic@example.com", "scim-viewers");
    const [deny] = (await api("/denies?active=true")).body.denies as { id: string }[];
    expect(
      (await viewer.agent.post(`/admin/denies/${deny!.id}/lift`).type("form").send({ _csrf: viewer.csrf })).status,
    ).toBe(403);
    expect(
      (await viewer.agent.post(`/admin/campaigns/${campaignId}/close`).type("form").send({ _csrf: viewer.csrf }))
        .status,
    ).toBe(403);

    const { agent, csrf } = await signIn("ada@example.com", "scim-admins");
    const all = await agent.get(`/admin/campaigns/${campaignId}`);
    expect(all.text).toContain("<td>basic_access in EU Production</td>");
    expect(all.text).toContain("<td>basic_access in US Production</td>");
    const uma = await agent.get(`/admin/campaigns/${campaignId}?reviewer=name%3Auma%40example.com`);
    expect(uma.text).toContain("<td>basic_access in US Production</td>");
    expect(uma.text).not.toContain("<td>basic_access in EU Production</td>");
    expect(all.text).toContain("Denies from this campaign");

    const lifted = await agent.post(`/admin/denies/${deny!.id}/lift`).type("form").send({ _csrf: csrf });
    expect(lifted.status).toBe(303);
    await eventually("the grant back on the platform", async () =>
      (await euPermissions(stack, "alice@example.com")).includes("send_campaigns_canvases"),
    );
    // The access report now shows no deny; as of a moment it was in force, it does.
    type Row = { permission: string; deny: { decidedBy: string } | null };
    const canvases = (rows: Row[]) => rows.find((r) => r.permission === "send_campaigns_canvases")!;
    const now = (await api("/access?user=alice")).body.rows as Row[];
    expect(canvases(now).deny).toBeNull();
    const then = (await api(`/access?user=alice&at=${encodeURIComponent(afterRevoke)}`)).body.rows as Row[];
    expect(canvases(then).deny).toMatchObject({ decidedBy: "vic@example.com" });

    const closed = await agent.post(`/admin/campaigns/${campaignId}/close`).type("form").send({ _csrf: csrf });
    expect(closed.status).toBe(303);
    expect((await api(`/campaigns/${campaignId}`)).body).toMatchObject({
      status: "closed",
      closedBy: "ada@example.com",
      closeSummary: { kept: 1, revoked: 1, undecided: 2, undecidedAction: "keep" },
    });
  });

  it("the Access review page's evidence pack: admins download a pack that verifies; viewers get no button and a 403", async () => {
    const viewer = await signIn("vic@example.com", "scim-viewers");
    expect((await viewer.agent.get("/admin/access")).text).not.toContain("Download the evidence pack");
    const viewerPost = viewer.agent.post("/admin/access/evidence").type("form");
    expect((await viewerPost.send({ _csrf: viewer.csrf, from: "2026-01-01", to: "2026-01-02" })).status).toBe(403);

    const { agent, csrf } = await signIn("ada@example.com", "scim-admins");
    expect((await agent.get("/admin/access")).text).toContain("Download the evidence pack");
    const backwards = { _csrf: csrf, from: "2026-02-01", to: "2026-01-01" };
    expect((await agent.post("/admin/access/evidence").type("form").send(backwards)).status).toBe(400);
    const today = new Date().toISOString().slice(0, 10);
    const pack = await agent
      .post("/admin/access/evidence")
      .type("form")
      .send({ _csrf: csrf, from: today, to: today })
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => done(null, Buffer.concat(chunks)));
      });
    expect(pack.status).toBe(200);
    expect(pack.headers["content-disposition"]).toMatch(/^attachment; filename="evidence-/);
    const verdict = await verifyEvidencePack(Readable.from([pack.body as Buffer]), evidenceKey.publicKey);
    expect(verdict).toMatchObject({ ok: true, problems: [] });
  });

  it("reviewers are matched by NameID without regard to case: a campaign naming Vic@Example.COM is reviewed by VIC@example.com", async () => {
    const started = await request(stack.service.url)
      .post("/admin/api/campaigns")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      .send({
        name: "Case check",
        scope: { kind: "workspace", workspace: "EU Production" },
        dueAt: new Date(Date.now() + 86_400_000).toISOString(),
        reviewers: [{ name: "Vic@Example.COM", workspace: "EU Production" }],
        fallbackReviewer: "Security@Example.com",
      });
    expect(started.status).toBe(201);
    const caseCampaign = started.body.id as string;
    const held = (await api(`/campaigns/${caseCampaign}/items?reviewer=all`)).body.items as Item[];
    expect(held.length).toBeGreaterThan(0);

    const { agent, csrf } = await signIn("VIC@example.com", "scim-viewers");
    const page = await agent.get(`/admin/campaigns/${caseCampaign}`);
    expect(page.text).toContain(
      `<dt>Items to review</dt><dd>${held.length}: ${held.length} open, 0 kept, 0 revoked</dd>`,
    );
    const kept = await agent
      .post(`/admin/campaigns/${caseCampaign}/keep`)
      .type("form")
      .send({ _csrf: csrf, item: held.map((i) => i.id) });
    expect(kept.status).toBe(303);
    expect((await api(`/campaigns/${caseCampaign}`)).body.counts).toMatchObject({ kept: held.length, open: 0 });
  });
});

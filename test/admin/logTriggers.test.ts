import { generateKeyPairSync } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { Readable } from "node:stream";
import request from "supertest";
import tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, idp, startStack, waitForQueueIdle, type Stack } from "../support/stack.js";
import { signInLocally } from "../support/adminHarness.js";
import { loadFixtures } from "../support/emulator.js";
import { CATALOGUE_FIXTURES, CATALOGUE_MAPPING } from "../support/mapping.js";
import { captureLogs } from "../support/logCapture.js";

/**
 * The reconciliation log says what happened in words ("added to group Marketing"), with the
 * group's name as it was when the IdP made the change, and the ids on the entry's own page. A
 * role or entitlement the IdP assigns or removes reads as such ("entitlement Marketer – Fashion
 * Brands assigned in Okta"), with the catalogue's name at the time, in the log and the evidence pack;
 * a mapping reload that changes the catalogue names the entries it changed.
 */

describe("reconciliation log triggers, end to end over HTTP", () => {
  let stack: Stack;
  let agent: request.Agent;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    stack = await startStack();
    const scim = idp(stack);
    ids.ann = await scim.createUser("ann@example.com");
    ids.bob = await scim.createUser("bob@example.com");
    ids.dan = await scim.createUser("dan@example.com");
    ids.eve = await scim.createUser("eve@example.com");
    ids.marketing = await scim.createGroup("Marketing", [ids.ann]);
    ids.admins = await scim.createGroup("Platform Admins", [ids.dan, ids.eve]);
    await waitForQueueIdle(stack);
    agent = request.agent(stack.service.url);
    await signInLocally(agent);
  });
  afterAll(async () => stack?.close());

  /** The log page's rows for one user, as text. */
  const logText = async (userName: string) => {
    const res = await agent.get(`/admin/log?user=${encodeURIComponent(userName)}`);
    expect(res.status).toBe(200);
    return res.text;
  };
  const latestEntryId = async (userName: string) => {
    const rows: { id: string }[] = await stack.service.db.query(
      `SELECT id FROM reconcile_log WHERE user_name = $1 ORDER BY id DESC LIMIT 1`,
      [userName],
    );
    return rows[0]!.id;
  };

  it("a membership PATCH shows as 'added to group Marketing', and keeps that name after the group is renamed", async () => {
    const scim = idp(stack);
    await scim.patch(`/Groups/${ids.marketing}`, [{ op: "add", path: "members", value: [{ value: ids.bob }] }]);
    await waitForQueueIdle(stack);
    expect(await logText("bob@example.com")).toContain("added to group Marketing");
    const added = await latestEntryId("bob@example.com");

    await scim.patch(`/Groups/${ids.marketing}`, [{ op: "replace", path: "displayName", value: "Growth" }]);
    await waitForQueueIdle(stack);
    const text = await logText("bob@example.com");
    expect(text).toContain("group Marketing renamed to Growth");
    expect(text).toContain("added to group Marketing");
    expect(text).not.toContain("IdP PATCH");

    const entry = await agent.get(`/admin/log/${added}`);
    expect(entry.text).toContain("added to group Marketing");
    expect(entry.text).toContain(`Marketing (${ids.marketing})`);
    expect(entry.text).toContain(`PATCH /scim/v2/Groups/${ids.marketing}`);
  });

  it("a removal and a deactivation read as such", async () => {
    const scim = idp(stack);
    await scim.patch(`/Groups/${ids.admins}`, [{ op: "remove", path: `members[value eq "${ids.dan}"]` }]);
    await waitForQueueIdle(stack);
    expect(await logText("dan@example.com")).toContain("removed from group Platform Admins");
    await scim.patch(`/Users/${ids.eve}`, [{ op: "replace", value: { active: false } }]);
    await waitForQueueIdle(stack);
    expect(await logText("eve@example.com")).toContain("deactivated in the IdP");
  });
});

describe("roles and entitlements assigned in the IdP, in the log's words", () => {
  let stack: Stack;
  let agent: request.Agent;
  let alice: string;
  const signingKey = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const since = new Date(Date.now() - 60_000).toISOString();
  let mappingText = CATALOGUE_MAPPING;
  const reload = async (text: string) => {
    mappingText = text;
    await writeFile(stack.mappingFile, text);
    expect((await stack.service.mappings.reload(stack.service.db)).ok).toBe(true);
  };
  const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

  beforeAll(async () => {
    stack = await startStack({
      mapping: CATALOGUE_MAPPING,
      emulator: { permissions: "granular" },
      env: { RECONCILE_DEPROVISION_GRACE_MS: "3600000", EVIDENCE_SIGNING_KEY: signingKey },
    });
    // The platform has no API to create permission sets: the emulator's fixtures stand for the company's own.
    await loadFixtures(stack.emulator.url, CATALOGUE_FIXTURES);
    alice = await idp(stack).createUser("alice@example.com");
    await idp(stack).createGroup("Marketing", [alice]);
    await waitForQueueIdle(stack);
    agent = request.agent(stack.service.url);
    await signInLocally(agent);
  });
  afterAll(async () => stack?.close());

  const logText = async () => {
    const res = await agent.get(`/admin/log?user=alice%40example.com`);
    expect(res.status).toBe(200);
    return res.text;
  };
  const latestEntry = async () => {
    const rows: { id: string; action: string }[] = await stack.service.db.query(
      `SELECT id, action FROM reconcile_log WHERE user_name = 'alice@example.com' ORDER BY id DESC LIMIT 1`,
    );
    return rows[0]!;
  };
  /** changes/changes.csv of the evidence pack, from the admin API. */
  const changesCsv = async () => {
    const query = `from=${encodeURIComponent(since)}&to=${encodeURIComponent(new Date().toISOString())}`;
    const res = await fetch(`${stack.service.url}/admin/api/evidence?${query}`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    const extract = tar.extract();
    Readable.from([Buffer.from(await res.arrayBuffer())]).pipe(extract);
    let csv = "";
    for await (const entry of extract) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry as AsyncIterable<Buffer>) chunks.push(chunk);
      if (entry.header.name === "changes/changes.csv") csv = Buffer.concat(chunks).toString("utf8");
    }
    return csv;
  };

  it("an IdP PATCH assigning, then removing, an entitlement reads as such, with the name it had then", async () => {
    await idp(stack).patch(`/Users/${alice}`, [
      { op: "add", path: "entitlements", value: [{ value: "marketer-fashion", type: "permissionSet" }] },
    ]);
    await waitForQueueIdle(stack);
    const assigned = await latestEntry();
    expect(assigned.action).toBe("update");
    const assignedWords = "entitlement Marketer – Fashion Brands assigned in Okta";
    expect(await logText()).toContain(assignedWords);
    const page = await agent.get(`/admin/log/${assigned.id}`);
    expect(page.text).toContain(assignedWords);
    expect(page.text).toMatch(/Assigned entitlement[\s\S]{0,200}Marketer – Fashion Brands \(marketer-fashion\)/);

    // The catalogue renames the entry (no grant changes): the old row keeps the name it was assigned under.
    await reload(mappingText.replace("displayName: Marketer – Fashion Brands", "displayName: Fashion marketer"));
    await idp(stack).patch(`/Users/${alice}`, [{ op: "remove", path: 'entitlements[value eq "marketer-fashion"]' }]);
    await waitForQueueIdle(stack);
    const removed = await latestEntry();
    expect(removed.id).not.toBe(assigned.id);
    const text = await logText();
    expect(text).toContain("entitlement Fashion marketer removed in Okta");
    expect(text).toContain(assignedWords);
    expect(text).not.toContain("profile changed in the IdP");
    expect((await agent.get(`/admin/log/${assigned.id}`)).text).toContain(assignedWords);

    // The evidence pack's why column says the same.
    const csv = await changesCsv();
    expect(csv).toContain(`"${assignedWords}"`);
    expect(csv).toContain(`"entitlement Fashion marketer removed in Okta"`);
  });

  it("an IdP PUT (Okta's writes are whole users) assigning, then removing, a role reads as such; one changing the name alone, as a profile change", async () => {
    /** GETs alice, changes her as Okta would, PUTs her whole, and answers the words of the log entry it caused. */
    const put = async (change: (user: Record<string, unknown>) => void) => {
      const before = await latestEntry();
      const user = (await idp(stack).send("get", `/Users/${alice}`)).body as Record<string, unknown>;
      delete user.meta;
      change(user);
      const res = await idp(stack).send("put", `/Users/${alice}`, user);
      expect(res.status).toBe(200);
      await waitForQueueIdle(stack);
      const entry = await latestEntry();
      expect(entry.id).not.toBe(before.id);
      return (await agent.get(`/admin/log/${entry.id}`)).text;
    };
    // Marketer – Fashion Brands, renamed Fashion marketer by the test before; assigned as a role this time.
    expect(await put((u) => (u.roles = [{ value: "marketer-fashion", primary: false }]))).toContain(
      "role Fashion marketer assigned in Okta",
    );
    const removed = await put((u) => delete u.roles);
    expect(removed).toContain("role Fashion marketer removed in Okta");
    expect(removed).not.toContain("profile changed in the IdP");
    expect(await put((u) => (u.name = { givenName: "Alicia", familyName: "Test" }))).toContain(
      "profile changed in the IdP",
    );
  });

  it("a mapping reload that changes the catalogue names the entries it changed, in the log and the process log", async () => {
    await idp(stack).patch(`/Users/${alice}`, [
      { op: "add", path: "entitlements", value: [{ value: "eu-analyst", type: "workspacePermissions" }] },
    ]);
    await waitForQueueIdle(stack);
    const assigned = await latestEntry();
    const removedLine = lineOf(mappingText, "id: lifecycle-team");
    // EU analyst grants one more permission; Lifecycle team leaves the catalogue.
    const next = mappingText
      .replace(
        "displayName: EU analyst\n      type: workspacePermissions\n      workspace: EU Production\n      permissions: [view_campaigns, view_segments]",
        "displayName: EU analyst\n      type: workspacePermissions\n      workspace: EU Production\n      permissions: [view_campaigns, view_segments, edit_campaigns]",
      )
      .replace(/    - id: lifecycle-team\n(      .*\n)+?(?=    - id:)/, "");
    expect(next).toContain("edit_campaigns]");
    expect(next).not.toContain("lifecycle-team");
    const changedLine = lineOf(next, "id: eu-analyst");
    const records = await captureLogs(() => reload(next));
    await waitForQueueIdle(stack);
    const entry = await latestEntry();
    expect(entry.id).not.toBe(assigned.id);
    const words = `mapping change: catalogue entry EU analyst, line ${changedLine}; removed catalogue entry Lifecycle team, line ${removedLine}`;
    expect(await logText()).toContain(words);
    const page = await agent.get(`/admin/log/${entry.id}`);
    expect(page.text).toContain(words);
    expect(page.text).toContain(`EU analyst (eu-analyst, line ${changedLine})`);
    expect(page.text).toContain(`Lifecycle team (lifecycle-team, line ${removedLine})`);
    const line = records.find((r) => r.message === "mapping put in force");
    expect(line).toMatchObject({ catalogueChanged: ["eu-analyst", "lifecycle-team"] });
  });
});

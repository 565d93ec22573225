import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseMapping } from "../../src/mapping/file.js";
import { MappingStore } from "../../src/mapping/store.js";
import { signInLocally } from "../support/adminHarness.js";
import { DRAFT_MAPPING } from "../support/mapping.js";
import { idp, startStack, TEST_MAPPING, writeMappingFile, type Stack } from "../support/stack.js";

/**
 * The admin pages show the mapping in force (the one every replica plans with, mapping_state), not
 * this replica's file: during a rollout another replica's newer file is in force, and the user page
 * shows the grants the reconciler applies, with a notice that this replica's file differs.
 *
 * This service's file is TEST_MAPPING (Marketing: basic_access and send_campaigns_canvases); the
 * other replica's is DRAFT_MAPPING (Marketing: basic_access only; admins also manage_company_settings).
 */
describe("the admin pages show the mapping in force", () => {
  let stack: Stack;
  let agent: request.Agent;
  let ann: string;
  const draftVersion = parseMapping(DRAFT_MAPPING).hash.slice(0, 12);
  const fileVersion = parseMapping(TEST_MAPPING).hash.slice(0, 12);

  beforeAll(async () => {
    // No workers: the pages are read, nothing is applied.
    stack = await startStack({ workers: false });
    ann = await idp(stack).createUser("ann@example.com");
    await idp(stack).createGroup("Marketing", [ann]);
    agent = request.agent(stack.service.url);
    await signInLocally(agent);
  });
  afterAll(async () => stack?.close());

  /** The page's text, entities decoded (the notice says "replica's"). */
  const page = async (path: string) => {
    const res = await agent.get(path);
    expect(res.status, res.text).toBe(200);
    return res.text.replace(/&#39;|&#x27;|&apos;/g, "'").replace(/&quot;/g, '"');
  };
  const notice = `this replica's mapping file differs from the mapping in force (version ${draftVersion})`;

  it("with this replica's file in force: its grants, and no notice", async () => {
    const user = await page(`/admin/users/${ann}`);
    expect(user).toContain("send_campaigns_canvases");
    expect(user).not.toContain("differs from the mapping in force");
  });

  it("with another replica's file in force: the user page shows its grants, and says this file differs", async () => {
    // Another replica starts with the newer file and puts it in force (src/service.ts does so at boot).
    await (await MappingStore.load(await writeMappingFile(DRAFT_MAPPING))).putInForce(stack.service.db);

    const user = await page(`/admin/users/${ann}`);
    expect(user).toContain(notice);
    expect(user).toContain(`this replica's file is version ${fileVersion}`);
    expect(user).toContain("basic_access");
    // The grant only this replica's file gives: neither desired nor among the matched rule's grants.
    expect(user).not.toContain("send_campaigns_canvases");

    const mapping = await page("/admin/mapping");
    expect(mapping).toContain(notice);
    expect(mapping).toContain("manage_company_settings"); // the rules and the YAML in force
    expect(await page("/admin")).toContain(notice);
  });

  it("with a mapping in force this version cannot read: this file's grants, and the notice says planning is paused", async () => {
    await stack.database.db.execute(`UPDATE mapping_state SET hash = 'from-a-newer-release', source_text = $1`, [
      `${DRAFT_MAPPING}\nfutureSetting: true\n`,
    ]);
    const user = await page(`/admin/users/${ann}`);
    expect(user).toContain(
      "this replica's mapping file differs from the mapping in force (version from-a-newer), which this version cannot read",
    );
    expect(user).toContain("planning is paused until they match");
    expect(user).toContain("send_campaigns_canvases");
  });

  it("with this replica's file back in force: no notice", async () => {
    await stack.service.mappings.putInForce(stack.service.db);
    const user = await page(`/admin/users/${ann}`);
    expect(user).toContain("send_campaigns_canvases");
    expect(user).not.toContain("differs from the mapping in force");
  });
});

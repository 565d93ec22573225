import { generateKeyPairSync } from "node:crypto";
import os from "node:os";
import { Readable, Writable } from "node:stream";
import request from "supertest";
import tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEvidencePack } from "../../src/review/evidence/pack.js";
import { CAMPAIGN_DECISIONS_CHAIN, verifyChain } from "../../src/db/auditChain.js";
import { campaignCommand } from "../../src/cli/campaign.js";
import { loadEnv } from "../../src/config/env.js";
import { ADMIN_TOKEN, adminApi, idp, startStack, waitForQueueIdle, type Stack } from "../support/stack.js";

/**
 * A decision taken `as` a reviewer by the admin API (bearer token) or the CLI (an OS account)
 * names who authenticated with the name acted for (docs/access-review.md, "Campaigns"): in the
 * decision's record, the log entry of the revoke and the evidence pack's decisions.csv. A bare
 * reviewer's name would be a sign-off nobody can trace to the one who made it.
 */

const KATE = "kate@example.com";
const API_AS_KATE = `admin-api as ${KATE}`;
const CLI_AS_KATE = `cli:${os.userInfo().username} as ${KATE}`;

async function untar(bytes: Buffer): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const extract = tar.extract();
  Readable.from([bytes]).pipe(extract);
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry as AsyncIterable<Buffer>) chunks.push(chunk);
    files.set(entry.header.name, Buffer.concat(chunks).toString("utf8"));
  }
  return files;
}

describe("a decision taken as a reviewer names the principal that took it", () => {
  let stack: Stack;
  let campaignId: string;
  const from = new Date(Date.now() - 3_600_000);
  const itemOf: Record<string, string> = {};

  const collect = () => {
    const chunks: Buffer[] = [];
    const out = new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk);
        done();
      },
    });
    return { out, bytes: () => Buffer.concat(chunks) };
  };
  const cliWithHint = async (...args: string[]) => {
    const { out, bytes } = collect();
    const hint = collect();
    await campaignCommand(loadEnv({ MAPPING_FILE: stack.mappingFile }), stack.database.db, args, out, hint.out);
    return { json: JSON.parse(bytes().toString("utf8")), hint: hint.bytes().toString("utf8") };
  };
  const cli = async (...args: string[]) => (await cliWithHint(...args)).json;
  const post = (path: string, body: object) =>
    request(stack.service.url).post(`/admin/api${path}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`).send(body);

  beforeAll(async () => {
    stack = await startStack();
    const users = [];
    for (const name of ["bob", "cid"]) users.push(await idp(stack).createUser(`${name}@example.com`));
    await idp(stack).createGroup("Platform Admins", users);
    await waitForQueueIdle(stack, { deferred: "wait" });
    const started = await post("/campaigns", {
      name: "Admins",
      scope: { kind: "company-admins" },
      dueAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      reviewers: [{ name: KATE }],
      fallbackReviewer: "security@example.com",
    });
    expect(started.status).toBe(201);
    campaignId = started.body.id as string;
    const items = (await adminApi(stack)(`/campaigns/${campaignId}/items?reviewer=all`)).body.items as {
      id: string;
      userName: string;
    }[];
    for (const i of items) itemOf[i.userName] = i.id;
  }, 90_000);
  afterAll(async () => stack?.close());

  it("campaign show without --as lists none of the items and says to name the reviewer with --as, or --all", async () => {
    const mine = await cliWithHint("show", campaignId);
    expect(mine.json).toMatchObject({ id: campaignId, items: [] });
    expect(mine.hint).toContain(`No item of campaign ${campaignId} is for cli:${os.userInfo().username}`);
    expect(mine.hint).toContain("without --as, the reviewer is the OS account");
    expect(mine.hint).toContain(`Open items are for: --as ${KATE} (2 open).`);
    expect(mine.hint).toContain("--all");

    const kates = await cliWithHint("show", campaignId, "--as", KATE);
    expect(kates.json.items).toHaveLength(2);
    expect(kates.hint).toBe("");
    const all = await cliWithHint("show", campaignId, "--all");
    expect(all.json.items).toHaveLength(2);
    expect(all.hint).toBe("");
  });

  it("records `admin-api as kate` and `cli:<os user> as kate` in the decision, the log and the pack", async () => {
    const byApi = await post(`/campaigns/${campaignId}/decisions`, {
      as: KATE,
      decision: "revoke",
      comment: "left the team",
      items: [itemOf["bob@example.com"]],
    });
    expect(byApi.body).toMatchObject({ decided: 1 });
    const byCli = await cli(
      "decide",
      campaignId,
      "revoke",
      itemOf["cid@example.com"]!,
      "--as",
      KATE,
      "--comment",
      "moved",
    );
    expect(byCli).toMatchObject({ decided: 1 });

    const decisions = await stack.service.db.query<{ user_name: string; decided_by: string }>(
      `SELECT user_name, decided_by FROM campaign_decisions ORDER BY id`,
    );
    expect(decisions).toEqual([
      { user_name: "bob@example.com", decided_by: API_AS_KATE },
      { user_name: "cid@example.com", decided_by: CLI_AS_KATE },
    ]);
    expect(await verifyChain(stack.service.db, CAMPAIGN_DECISIONS_CHAIN)).toMatchObject({ ok: true, entries: 2 });
    const items = (await adminApi(stack)(`/campaigns/${campaignId}/items?reviewer=all`)).body.items as {
      userName: string;
      decidedBy: string;
    }[];
    expect(Object.fromEntries(items.map((i) => [i.userName, i.decidedBy]))).toEqual({
      "bob@example.com": API_AS_KATE,
      "cid@example.com": CLI_AS_KATE,
    });

    const logged = await stack.service.db.query<{ user_name: string; actor: string; note: string }>(
      `SELECT user_name, actor, note FROM reconcile_log WHERE action = 'revoke' ORDER BY id`,
    );
    expect(logged).toEqual([
      expect.objectContaining({ user_name: "bob@example.com", actor: API_AS_KATE }),
      expect.objectContaining({ user_name: "cid@example.com", actor: CLI_AS_KATE }),
    ]);
    expect(logged[0]!.note).toContain(`by ${API_AS_KATE}: left the team`);
    expect(logged[1]!.note).toContain(`by ${CLI_AS_KATE}: moved`);

    const { privateKey } = generateKeyPairSync("ed25519");
    const { out, bytes } = collect();
    await writeEvidencePack(
      { db: stack.service.db, signingKey: privateKey, now: () => new Date() },
      { from, to: new Date(Date.now() + 60_000) },
      out,
    );
    const csv = (await untar(bytes())).get("campaigns/decisions.csv")!;
    // Exported cells are always quoted: each decision's row names its principal in its decidedBy cell.
    const rows = csv.trim().split("\r\n");
    expect(rows[0]).toContain('"decidedBy"');
    expect(rows.slice(1)).toEqual([
      expect.stringContaining(`"bob@example.com"`),
      expect.stringContaining(`"cid@example.com"`),
    ]);
    expect(rows[1]).toContain(`"${API_AS_KATE}"`);
    expect(rows[2]).toContain(`"${CLI_AS_KATE}"`);
  });
});

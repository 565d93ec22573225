import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeCampaign,
  decideItems,
  startCampaign,
  decideSchema,
  startCampaignSchema,
} from "../../src/review/campaigns/index.js";
import { CONNECTION_NAMES, openDatabase } from "../../src/db/dataSource.js";
import { writeLogEntry } from "../../src/db/reconcile/logRepository.js";
import { systemClock } from "../../src/clock.js";
import type { Database } from "../../src/db/database.js";
import { idp, startStack, type Stack } from "../support/stack.js";
import { runCli } from "../support/cli.js";
import { validate } from "../../src/http/validate.js";

/**
 * Campaign decisions carry their own hash chain (docs/access-review.md, "The tamper-evident log"):
 * keeps, revokes and the items left undecided at the close are appended, chained, to
 * campaign_decisions; `scim-connector audit verify` verifies both chains and names the decision
 * whose comment was edited in the database. Deciding from two replicas while the log is written
 * leaves both chains valid (each transaction takes the chain heads last, so none waits on another).
 */

describe("the campaign decisions' hash chain", () => {
  let stack: Stack;
  const admin = { name: "admin@example.com", role: "admin" };

  const auditVerify = () => runCli(stack, ["audit", "verify"]);

  const decisions = async () =>
    stack.database.db.query<{ id: string; item_id: string; decision: string; comment: string | null }>(
      `SELECT id, item_id, decision, comment FROM campaign_decisions ORDER BY id`,
    );
  const itemIds = async (campaignId: string) =>
    (
      await stack.database.db.query<{ id: string }>(
        `SELECT id FROM campaign_items WHERE campaign_id = $1 ORDER BY id`,
        [campaignId],
      )
    ).map((r) => r.id);
  const start = (db: Database, name: string) =>
    startCampaign(
      { db, clock: systemClock },
      validate(startCampaignSchema, {
        name,
        scope: { kind: "workspace", workspace: "EU Production" },
        dueAt: new Date(Date.now() + 86_400_000).toISOString(),
        fallbackReviewer: "owner@example.com",
      }),
      admin.name,
    );

  beforeAll(async () => {
    stack = await startStack({ workers: false });
    const group = await idp(stack).createGroup("Marketing");
    for (let n = 1; n <= 6; n++) {
      const id = await idp(stack).createUser(`m${n}@example.com`);
      await idp(stack).patch(`/Groups/${group}`, [{ op: "add", path: "members", value: [{ value: id }] }]);
    }
    const worker = stack.service.reconciliation!.worker;
    while (await worker.runOnce());
  }, 90_000);
  afterAll(async () => stack?.close());

  it("chains keeps, revokes and the undecided at close; audit verify names the decision whose comment was edited", async () => {
    const deps = { db: stack.database.db, clock: systemClock };
    const campaign = await start(deps.db, "Quarterly");
    const items = await itemIds(campaign.id);
    expect(items.length).toBeGreaterThanOrEqual(6);
    await decideItems(
      deps,
      campaign.id,
      admin,
      validate(decideSchema, { items: items.slice(0, 2), decision: "keep", comment: "still in marketing" }),
    );
    await decideItems(
      deps,
      campaign.id,
      admin,
      validate(decideSchema, { items: [items[2]!], decision: "revoke", comment: "left the team" }),
    );
    await closeCampaign(deps, campaign.id, admin.name, "keep");

    const recorded = await decisions();
    expect(recorded.map((d) => [d.item_id, d.decision])).toEqual([
      [items[0], "keep"],
      [items[1], "keep"],
      [items[2], "revoke"],
      ...items.slice(3).map((i) => [i, "undecided"]),
    ]);
    const ok = await auditVerify();
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.stdout).toContain(
      `campaign_decisions: ${recorded.length} entries verified; head entry ${recorded.at(-1)!.id}`,
    );
    expect(ok.stdout).toMatch(/reconcile_log: \d+ entries verified/);

    const target = recorded[2]!;
    await stack.database.db.query(`UPDATE campaign_decisions SET comment = 'approved by the manager' WHERE id = $1`, [
      target.id,
    ]);
    const tampered = await auditVerify();
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain(
      `campaign_decisions: NOT VERIFIED after 2 good entries: entry ${target.id} does not match its hash`,
    );
    // The log's chain is untouched, and says so.
    expect(tampered.stdout).toMatch(/reconcile_log: \d+ entries verified/);
    await stack.database.db.query(`UPDATE campaign_decisions SET comment = $2 WHERE id = $1`, [
      target.id,
      target.comment,
    ]);
    expect((await auditVerify()).code).toBe(0);
  });

  it("two replicas deciding at once, while the log is written, leave both chains valid", async () => {
    const replicas = await Promise.all(
      ["a", "b"].map(() =>
        openDatabase({ url: stack.database.url, poolSize: 4, applicationName: CONNECTION_NAMES.cli }),
      ),
    );
    try {
      const campaign = await start(replicas[0]!, "Concurrent");
      const items = await itemIds(campaign.id);
      const before = (await decisions()).length;
      await Promise.all([
        ...items.map((item, i) =>
          decideItems(
            { db: replicas[i % 2]!, clock: systemClock },
            campaign.id,
            admin,
            validate(decideSchema, {
              items: [item],
              decision: i % 3 === 0 ? "revoke" : "keep",
              comment: `decision ${i}`,
            }),
          ),
        ),
        ...Array.from({ length: 40 }, (_, i) =>
          writeLogEntry(replicas[i % 2]!, {
            at: new Date(),
            userName: `replica-${i}@example.com`,
            action: "verify",
            outcome: "succeeded",
            trigger: { kind: "resync", runId: `run-${i}` },
          }),
        ),
      ]);
      expect((await decisions()).length).toBe(before + items.length);
      const result = await auditVerify();
      expect(result).toMatchObject({ code: 0 });
      expect(result.stdout).toContain(`campaign_decisions: ${before + items.length} entries verified`);
    } finally {
      await Promise.all(replicas.map((db) => db.close()));
    }
  });
});

import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  campaignItems,
  decideItems,
  type Reviewer,
  campaignItemsQuerySchema,
  decideSchema,
} from "../../src/review/campaigns/index.js";
import { systemClock } from "../../src/clock.js";
import { ADMIN_TOKEN, adminApi, idp, startStack, waitForQueueIdle, type Stack } from "../support/stack.js";
import { validate } from "../../src/http/validate.js";

/**
 * A viewer whose NameID reads as a reviewer's (the Kelvin sign K, U+212A, which toLowerCase makes
 * a k) neither sees nor decides that reviewer's items; a campaign or an `as` naming someone in mixed
 * scripts is refused (issue 34, finding 6; src/admin/reviewerName.ts).
 */

const KATE = "kate@example.com";
const KELVIN_KATE = "\u212Aate@example.com";

describe("a confusable reviewer name answers to nobody else's items", () => {
  let stack: Stack;
  let campaignId: string;
  const post = (path: string, body: object) =>
    request(stack.service.url).post(`/admin/api${path}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`).send(body);
  const campaign = (reviewers: object[], fallbackReviewer = "security@example.com") =>
    post("/campaigns", {
      name: "Admins",
      scope: { kind: "company-admins" },
      dueAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      reviewers,
      fallbackReviewer,
    });

  beforeAll(async () => {
    stack = await startStack();
    await idp(stack).createGroup("Platform Admins", [await idp(stack).createUser("bob@example.com")]);
    await waitForQueueIdle(stack, { deferred: "wait" });
    const started = await campaign([{ name: "Kate@Example.com" }]);
    expect(started.status).toBe(201);
    campaignId = started.body.id as string;
  }, 90_000);
  afterAll(async () => stack?.close());

  it("a viewer signed in as \u212Aate@… (Kelvin sign) sees none of kate@…'s items and cannot decide them", async () => {
    const deps = { db: stack.service.db, clock: systemClock };
    const kate: Reviewer = { name: KATE, role: "viewer" };
    const mallory: Reviewer = { name: KELVIN_KATE, role: "viewer" };
    const kates = (await campaignItems(deps, campaignId, kate, validate(campaignItemsQuerySchema, {}))).items;
    expect(kates.map((i) => i.userName)).toEqual(["bob@example.com"]);

    expect((await campaignItems(deps, campaignId, mallory, validate(campaignItemsQuerySchema, {}))).items).toEqual([]);
    await expect(
      campaignItems(deps, campaignId, mallory, validate(campaignItemsQuerySchema, { reviewer: `name:${KELVIN_KATE}` })),
    ).rejects.toThrow(/Kelvin sign/);
    await expect(
      decideItems(
        deps,
        campaignId,
        mallory,
        validate(decideSchema, { items: [kates[0]!.id], decision: "revoke", comment: "mine now" }),
      ),
    ).rejects.toThrow(/another reviewer/);
    const open = (await adminApi(stack)(`/campaigns/${campaignId}/items?reviewer=all`)).body.items as {
      decision: string | null;
    }[];
    expect(open.map((i) => i.decision ?? "open")).toEqual(["open"]);
  });

  it("refuses a campaign naming a reviewer in mixed scripts, and an `as` that reads as another", async () => {
    const cyrillic = await campaign([{ name: "k\u0430te@example.com" }]);
    expect(cyrillic.status).toBe(400);
    expect(JSON.stringify(cyrillic.body)).toMatch(/mixes scripts/);
    expect((await campaign([], KELVIN_KATE)).status).toBe(400);
    const asKelvin = await post(`/campaigns/${campaignId}/decisions`, {
      as: KELVIN_KATE,
      decision: "keep",
      items: ["1"],
    });
    expect(asKelvin.status).toBe(400);
  });
});

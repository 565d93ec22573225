import type { Writable } from "node:stream";
import { parseArgs } from "node:util";
import {
  campaignItemsQuerySchema,
  checkReviewerName,
  decideSchema,
  deciderOf,
  startCampaignSchema,
  type Reviewer,
} from "../review/campaigns/index.js";
import { createCampaigns } from "../review/campaigns/frontDoor.js";
import { systemClock } from "../clock.js";
import { validate } from "../http/validate.js";
import type { Env } from "../config/env.js";
import type { Database } from "../db/database.js";
import { cliReviewer } from "./commandActor.js";

/**
 * `scim-connector campaign start|list|show|decide|close` (docs/access-review.md, "Campaigns"):
 * the same use cases as the admin pages and the JSON API, answers as JSON on stdout. `--as` names
 * the reviewer (their SAML NameID); what it records names the OS account with them
 * (`cli:<os user> as <name>`), or the OS account alone (`cli:<os user>`) without `--as`.
 */
export async function campaignCommand(
  env: Env,
  db: Database,
  args: string[],
  out: Writable = process.stdout,
  err: Writable = process.stderr,
): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      as: { type: "string" },
      name: { type: "string" },
      scope: { type: "string" },
      workspace: { type: "string" },
      permission: { type: "string" },
      group: { type: "string", multiple: true },
      days: { type: "string" },
      due: { type: "string" },
      reviewer: { type: "string", multiple: true },
      fallback: { type: "string" },
      all: { type: "boolean" },
      open: { type: "boolean" },
      comment: { type: "string" },
      removal: { type: "string" },
      limit: { type: "string" },
    },
  });
  // The object the pages and the JSON API call (src/service/http.ts builds theirs).
  const campaigns = createCampaigns({ db, clock: systemClock, undecidedAtClose: env.CAMPAIGN_UNDECIDED_AT_CLOSE });
  const who: Reviewer = { ...cliReviewer(values.as), role: "admin" };
  if (who.principal) checkReviewerName(who.name);
  const actor = deciderOf(who);
  const print = (value: unknown): void => void out.write(`${JSON.stringify(value, null, 2)}\n`);
  switch (sub) {
    case "start":
      return print(
        await campaigns.start(
          validate(startCampaignSchema, {
            name: values.name,
            scope: scopeOf(values),
            dueAt: values.due,
            reviewers: (values.reviewer ?? []).map(reviewerOf),
            fallbackReviewer: values.fallback,
          }),
          actor,
        ),
      );
    case "list":
      return print(await campaigns.list());
    case "show": {
      const id = required(positionals[0], "campaign show <id>");
      const detail = await campaigns.detail(id);
      const items = await campaigns.items(
        id,
        who,
        validate(
          campaignItemsQuerySchema,
          {
            reviewer: values.all ? "all" : "mine",
            ...(values.open ? { decision: "open" } : {}),
            limit: values.limit ?? "1000",
          },
          "query",
        ),
      );
      if (!values.all && items.items.length === 0 && detail.counts.items > 0)
        err.write(emptyShowHint(id, who.name, values.as !== undefined, detail.counts.byReviewer));
      return print({ ...detail, items: items.items, nextCursor: items.nextCursor });
    }
    case "decide": {
      const [id, decision, ...items] = positionals;
      return print(
        await campaigns.decide(
          required(id, "campaign decide <id> keep|revoke <itemId>..."),
          who,
          validate(decideSchema, {
            decision,
            items,
            ...(values.comment !== undefined ? { comment: values.comment } : {}),
            // An account made by hand: --removal strip (the default) or delete (once an admin approves).
            ...(values.removal !== undefined ? { removal: values.removal } : {}),
          }),
        ),
      );
    }
    case "close":
      return print(await campaigns.close(required(positionals[0], "campaign close <id>"), actor));
    default:
      throw new Error("Use: campaign start|list|show|decide|close (scim-connector --help)");
  }
}

/**
 * Why `show` lists no item of a campaign that has some: it lists the reviewer's own items, and
 * without `--as` the reviewer is the OS account, which no campaign names. On stderr, so that
 * stdout stays JSON.
 */
function emptyShowHint(id: string, reviewer: string, asGiven: boolean, openByReviewer: Record<string, number>): string {
  const open = Object.entries(openByReviewer).map(([key, n]) =>
    key.startsWith("name:") ? `--as ${key.slice(5)} (${n} open)` : `${key} (${n} open)`,
  );
  return (
    `No item of campaign ${id} is for ${reviewer}` +
    (asGiven ? "" : " (without --as, the reviewer is the OS account)") +
    `. Show a reviewer's items with --as NAME, or every item with --all.` +
    (open.length ? ` Open items are for: ${open.join(", ")}.` : " No item is open.") +
    "\n"
  );
}

function required(value: string | undefined, usage: string): string {
  if (!value) throw new Error(`Use: scim-connector ${usage}`);
  return value;
}

function scopeOf(v: {
  scope?: string;
  workspace?: string;
  permission?: string;
  group?: string[];
  days?: string;
}): unknown {
  switch (v.scope ?? "everything") {
    case "workspace":
      return { kind: "workspace", workspace: v.workspace };
    case "permission":
      return { kind: "permission", permission: v.permission };
    case "groups":
      return { kind: "groups", groups: v.group ?? [] };
    case "not-signed-in":
      return { kind: "not-signed-in", days: v.days };
    default:
      return { kind: v.scope ?? "everything" };
  }
}

/** `jane@example.com`, `role:admin`, or either with `@@<workspace>`: `eu.owner@example.com@@EU Production`. */
function reviewerOf(text: string): Record<string, string> {
  const [who = "", workspace] = text.split("@@");
  const base: Record<string, string> = who.startsWith("role:") ? { role: who.slice(5) } : { name: who };
  return workspace ? { ...base, workspace } : base;
}

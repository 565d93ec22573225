import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASIC_ACCESS_GRANULAR } from "../../src/vocabulary/permissions.js";
import { csrfFrom, signInLocally } from "../support/adminHarness.js";
import { emulatorState, idp, startStack, type Stack } from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * The admin pages show a granular user's strings as the bundles the reviews use, each string one
 * click away (issue 47, item 8): the user page's "last applied → desired" and the log entry's
 * "old → new" drew one row per string, 45 for one legacy `basic_access`, where the access review
 * shows one grant. Server-rendered: a <details> per bundle, no JavaScript.
 */

const FORTY_FIVE = [...BASIC_ACCESS_GRANULAR, "launch_campaigns", "launch_canvases"];
const LABEL = "45 permissions from rule 'EU marketers'";

const MAPPING = `
permissionModel: granular
department:
  default: engineering
rules:
  - group: Marketing
    description: EU marketers
    workspaces:
      - name: EU Production
        permissions: [${FORTY_FIVE.join(", ")}]
`;

/** The <details> elements of a page whose summary contains `summary`, each as its text. */
function detailsWith(html: string, summary: string): string[] {
  return [...html.matchAll(/<details[^>]*>([\s\S]*?)<\/details>/g)]
    .map((m) => m[1]!)
    .filter((inner) => {
      const text = /<summary>([\s\S]*?)<\/summary>/.exec(inner)?.[1]?.replace(/&#x27;|&#39;/g, "'");
      return text?.includes(summary);
    });
}

const occurrences = (text: string, word: string) => text.split(word).length - 1;
const withoutDetails = (html: string) => html.replace(/<details[^>]*>[\s\S]*?<\/details>/g, "");
const withoutDiff = (html: string) => html.replace(/<table class="diff">[\s\S]*?<\/table>/g, "");

describe("a granular user's permissions on the admin pages, as bundles", () => {
  let stack: Stack;
  let agent: request.Agent;
  let userId: string;

  beforeAll(async () => {
    stack = await startStack({ mapping: MAPPING, emulator: { permissions: "granular" } });
    userId = await idp(stack).createUser("ann@example.com");
    await idp(stack).createGroup("Marketing", [userId]);
    await eventually("ann's account with the 45 strings", async () => {
      const held = (await emulatorState(stack)).dashboardUsers.find((u) => u.userName === "ann@example.com");
      return (
        held?.permissions.appGroup.find((w) => w.appGroupName === "EU Production")?.appGroupPermissions.length === 45
      );
    });
    await eventually("the create logged with its reasons", async () => {
      const [logged] = await stack.database.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM reconcile_log WHERE user_name = 'ann@example.com' AND action = 'create'
            AND outcome = 'succeeded' AND reasons IS NOT NULL`,
      );
      return logged!.n === 1;
    });
    agent = request.agent(stack.service.url);
    await signInLocally(agent);
  }, 120_000);
  afterAll(() => stack?.close());

  it("the user page names the bundle once, its 45 strings inside a details element, not one row each", async () => {
    const page = (await agent.get(`/admin/users/${userId}`)).text;
    const bundles = detailsWith(page, LABEL);
    expect(bundles).toHaveLength(1);
    for (const permission of FORTY_FIVE) expect(bundles[0]).toContain(permission);
    expect(page).not.toContain("EU Production.permissions[");
    // Every string is folded: none is on the page outside a details element (the matched rule's too).
    expect(occurrences(withoutDetails(page), "launch_canvases")).toBe(0);
    expect(detailsWith(withoutDiff(page), "45 permissions in EU Production")).toHaveLength(1);
  });

  it("the mapping page folds the rule's 45 strings, and a draft's preview folds what the user would lose", async () => {
    const page = (await agent.get("/admin/mapping")).text;
    const rules = detailsWith(page, "45 permissions in EU Production");
    expect(rules).toHaveLength(1);
    const [rule] = rules;
    for (const permission of FORTY_FIVE) expect(rule).toContain(permission);

    const preview = await agent
      .post("/admin/mapping/preview")
      .type("form")
      .send({ _csrf: csrfFrom(page), draft: MAPPING.replace("permissions: [", "permissions: [view_api_keys, ") });
    expect(preview.status).toBe(200);
    expect(preview.text).toContain("+ workspace EU Production: view_api_keys");
    const removed = await agent
      .post("/admin/mapping/preview")
      .type("form")
      .send({
        _csrf: csrfFrom(page),
        draft: MAPPING.replace(/permissions: \[.*\]/, "permissions: [view_api_keys]"),
      });
    const losses = detailsWith(removed.text, "− 45 permissions in workspace EU Production");
    expect(losses).toHaveLength(1);
    const [lost] = losses;
    for (const permission of FORTY_FIVE) expect(lost).toContain(permission);
    expect(removed.text).not.toContain("− workspace EU Production: launch_canvases");
  });

  it("the log entry's old → new names the bundle once, its strings inside a details element", async () => {
    const [entry] = await stack.database.db.query<{ id: string }>(
      `SELECT id::text FROM reconcile_log WHERE user_name = 'ann@example.com' AND action = 'create'`,
    );
    const page = (await agent.get(`/admin/log/${entry!.id}`)).text;
    const bundles = detailsWith(page, LABEL);
    expect(bundles).toHaveLength(1);
    for (const permission of FORTY_FIVE) expect(bundles[0]).toContain(permission);
    expect(page).not.toContain("EU Production.permissions[");
    expect(page).toMatch(/<tr class="diff-added[^"]*">/);
  });
});

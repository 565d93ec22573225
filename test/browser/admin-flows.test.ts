import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, newLaptopPage, screenshot } from "../support/browser.js";
import { addFault } from "../support/emulator.js";
import { DRAFT_MAPPING } from "../support/mapping.js";
import {
  ADMIN_TOKEN,
  emulatorState,
  emulatorStats,
  idp,
  startStack,
  TEST_MAPPING,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * The admin console driven in chromium against the whole product: users pushed through the SCIM
 * API, reconciled against the emulator over HTTP, and an admin reading and acting on it.
 */

describe("admin console flows in a browser", () => {
  let browser: Browser;
  let stack: Stack;
  let page: Page;
  let base: string;
  const ids: Record<string, string> = {};
  const onPlatform = async (userName: string) =>
    (await emulatorState(stack)).dashboardUsers.some((u) => u.userName === userName);

  beforeAll(async () => {
    browser = await launchBrowser();
    // The breaker holds any wave of two or more deprovisions, so there is something to approve.
    stack = await startStack({ env: { DEPROVISION_BREAKER_MIN: "1", DEPROVISION_BREAKER_PERCENT: "0" } });
    base = `${stack.service.url}/admin`;
    const scim = idp(stack);
    for (const name of ["ann", "bob", "cat", "dan", "eve"]) ids[name] = await scim.createUser(`${name}@example.com`);
    ids.marketing = await scim.createGroup("Marketing", [ids.ann!, ids.bob!, ids.cat!, ids.dan!]);
    await scim.createGroup("Platform Admins", [ids.eve!]);
    await waitForQueueIdle(stack);
    await eventually("five dashboard users", async () => (await emulatorState(stack)).dashboardUsers.length === 5, {
      timeoutMs: 20_000,
    });
    page = await newLaptopPage(browser);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it("signs in, filters the log and opens an entry", async () => {
    await page.goto(base);
    await page.fill("#token", ADMIN_TOKEN);
    await page.click("button[type=submit]");
    await page.waitForURL(base);
    expect(await page.locator("figure.gauge figcaption").textContent()).toContain("5 of 5,000 calls used");
    await screenshot(page, "flow-overview");

    await page.click("nav >> text=Reconciliation log");
    await page.fill("input[name=user]", "ann");
    await page.selectOption("select[name=action]", "create");
    await page.click("form.filters button[type=submit]");
    await page.waitForURL(/\/admin\/log\?user=ann&action=create/);
    const rows = page.locator("table tbody tr");
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain("ann@example.com");
    await screenshot(page, "flow-log-filtered");

    await rows.first().locator("a").first().click();
    await page.waitForURL(/\/admin\/log\/\d+$/);
    expect(await page.textContent("h1")).toBe("Log entry");
    expect(await page.textContent("main")).toContain("POST /scim/v2/Users");
    expect(await page.locator("tr.diff-added").count()).toBeGreaterThan(3);
    await screenshot(page, "flow-log-entry");

    await page.click("nav >> text=Users");
    await page.fill("input[name=q]", "e");
    await page.click("form.filters button[type=submit]");
    await page.waitForURL(/\/admin\/users\?q=e$/);
    expect(await page.locator("table tbody tr").count()).toBe(1); // eve
    await page.goto(`${base}/users`);
    expect(await page.locator("table tbody tr").count()).toBe(5);
    await screenshot(page, "flow-users");
  });

  it("starts a reconcile on demand for a user the platform refused, and sees it land", async () => {
    // The platform refuses the next create once: a terminal answer parks the user for an admin.
    await addFault(stack.emulator.url, { method: "POST", path: "/scim/v2/Users", status: 400, count: 1 });
    const scim = idp(stack);
    ids.fay = await scim.createUser("fay@example.com");
    await scim.patch(`/Groups/${ids.marketing}`, [{ op: "add", path: "members", value: [{ value: ids.fay }] }]);
    await eventually(
      "fay parked",
      async () => {
        const rows: unknown[] = await stack.service.db.query(
          `SELECT 1 FROM reconcile_queue WHERE user_id = $1 AND parked_at IS NOT NULL`,
          [ids.fay],
        );
        return rows.length > 0;
      },
      { timeoutMs: 20_000 },
    );
    expect(await onPlatform("fay@example.com")).toBe(false);

    await page.goto(base);
    const failure = page.locator("section:has(h2:text('Failures needing attention')) tbody tr");
    expect(await failure.first().textContent()).toContain("fay@example.com");
    await screenshot(page, "flow-overview-failure");

    await failure.first().locator("a").click();
    await page.waitForURL(`${base}/users/${ids.fay}`);
    expect(await page.textContent("main")).toContain("Rule 2 (line 9)");
    await page.click("button:text('Reconcile now')");
    await page.waitForURL(`${base}/users/${ids.fay}`);
    expect(await page.textContent(".flash")).toContain("Reconciled fay@example.com");
    expect(await onPlatform("fay@example.com")).toBe(true);
    const log = page.locator("section:has(h2:text('Log entries')) tbody tr");
    expect(await log.first().textContent()).toContain("reconcile-now");
    expect(await log.nth(1).textContent()).toContain("create");
    expect(await log.nth(1).textContent()).toContain("succeeded");
    await screenshot(page, "flow-reconcile-now");

    await page.goto(`${base}/log?action=create&user=fay`);
    expect(await page.locator("table tbody tr").first().textContent()).toContain("local admin");
  });

  it("previews a draft mapping without changing anything", async () => {
    const before = await emulatorStats(stack);
    await page.goto(`${base}/mapping`);
    await page.fill("#draft", DRAFT_MAPPING);
    await page.click("button:text('Preview changes')");
    await page.waitForURL(`${base}/mapping/preview`);
    const preview = page.locator("#preview");
    expect(await preview.textContent()).toContain("6 users affected");
    expect(await preview.textContent()).toContain("− workspace EU Production: send_campaigns_canvases");
    expect(await preview.textContent()).toContain("+ company: manage_company_settings");
    expect(await preview.textContent()).toContain("editing MAPPING_FILE");
    await screenshot(page, "flow-mapping-preview");
    expect((await emulatorStats(stack)).requests).toEqual(before.requests);
    expect(stack.service.mappings.sourceText()).toBe(TEST_MAPPING);
  });

  it("approves a held deprovision, and the platform loses that account", async () => {
    const scim = idp(stack);
    await Promise.all(
      ["bob", "cat", "dan"].map((n) => scim.patch(`/Users/${ids[n]}`, [{ op: "replace", value: { active: false } }])),
    );
    await waitForQueueIdle(stack);

    await page.goto(base);
    expect(
      Number(await page.locator("section:has(h2:text('Waiting for approval')) .stat").first().textContent()),
    ).toBeGreaterThanOrEqual(2);
    await page.click("text=Review approvals →");
    await page.waitForURL(`${base}/approvals`);
    const held = page.locator("form:has(input[name=id]) tbody tr");
    expect(await held.count()).toBeGreaterThanOrEqual(2);
    await screenshot(page, "flow-approvals");

    const first = held.first();
    const userName = (await first.locator("td").nth(1).textContent())!.trim();
    expect(await onPlatform(userName)).toBe(true);
    await first.locator("input[type=checkbox]").check();
    await page.click("button:text('Approve selected')");
    await page.waitForURL(`${base}/approvals`);
    expect(await page.textContent(".flash")).toContain("Approved 1 held action.");
    await eventually(`${userName} deprovisioned`, async () => !(await onPlatform(userName)), { timeoutMs: 20_000 });
    // The account leaves the platform a moment before its entry is written: wait for the entry.
    await eventually(`${userName}'s deprovision logged`, async () => {
      const [latest] = await stack.database.db.query(
        `SELECT action FROM reconcile_log WHERE user_name = $1 ORDER BY id DESC LIMIT 1`,
        [userName],
      );
      return latest?.action === "deprovision";
    });

    await page.goto(`${base}/log?user=${encodeURIComponent(userName)}`);
    const latest = page.locator("table tbody tr");
    // The Action column alone: the approval's Trigger cell names the held deprovision too.
    const action = (row: number) => latest.nth(row).locator("td").nth(2).textContent();
    expect(await action(0)).toBe("deprovision");
    expect(await action(1)).toBe("approve");
    expect(await latest.nth(1).textContent()).toContain("local admin");
    await screenshot(page, "flow-approved");
  });

  it("starts a full resync from the Runs page and watches it", async () => {
    await page.goto(`${base}/runs`);
    await page.click("button:text('Start a full resync now')");
    await page.waitForURL(`${base}/runs`);
    expect(await page.textContent(".flash")).toContain("Full resync started");
    expect(await page.locator("table tbody tr").count()).toBeGreaterThanOrEqual(1);
    await eventually(
      "the resync's re-derivation",
      async () => {
        const rows: { phase: string }[] = await stack.service.db.query(
          `SELECT phase FROM resync_runs WHERE actor = 'local admin'`,
        );
        return rows[0]?.phase !== "plan";
      },
      { timeoutMs: 20_000 },
    );
    await waitForQueueIdle(stack);
    await page.reload();
    await screenshot(page, "flow-runs");
  });
});

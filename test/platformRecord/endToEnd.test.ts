import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN } from "../support/constants.js";
import { ledgerDebits } from "../support/emulator.js";
import { S3RVER_CREDENTIALS, S3RVER_KEYS, startS3, type TestS3 } from "../support/s3.js";
import { eventually } from "../support/wait.js";
import { adminApi, emulatorState, idp, startStack, waitForQueueIdle, type Stack } from "../support/stack.js";
import { MARKETING_WORKSPACE, requestsTo, scimUsed } from "../reconcile/helpers.js";

/**
 * The platform's record end to end, through real parts only: the emulator's dashboard makes an
 * account by hand and changes a managed one's permissions; its own report (GET
 * /_emulator/security-events.csv) is posted to the connector's JSON API; the connector finds both
 * at no call, confirms the hand-made account with one lookup, puts the managed one back with one
 * read and one write, and leaves its own writes alone. Calls are counted on the emulator and in the
 * connector's budget ledger, and must agree.
 */
describe("the platform's record, from the emulator's report to what the connector does", () => {
  let stack: Stack;
  let report: string;
  const dashboard = (body: Record<string, unknown>) =>
    request(stack.emulator.url).post("/_emulator/dashboard").send(body);
  const importReport = (csv: string) =>
    request(stack.service.url)
      .post("/admin/api/platform/events")
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`)
      .set("Content-Type", "text/csv")
      .send(csv);
  const calls = async () => ({ emulator: await scimUsed(stack), ledger: await ledgerDebits(stack.service.db) });
  /** The SCIM requests the emulator received, by method and route. */
  const byRoute = async () =>
    Object.fromEntries(
      await Promise.all(
        [
          "POST /scim/v2/Users",
          "GET /scim/v2/Users",
          "GET /scim/v2/Users/{id}",
          "PUT /scim/v2/Users/{id}",
          "DELETE /scim/v2/Users/{id}",
        ].map(async (route) => [route, await requestsTo(stack, route)] as const),
      ),
    );

  beforeAll(async () => {
    stack = await startStack();
    const scim = idp(stack);
    await scim.createGroup("Marketing", [await scim.createUser("ann@example.com")]);
    await eventually("ann's account is on the platform", async () =>
      (await emulatorState(stack)).dashboardUsers.some((u) => u.userName === "ann@example.com"),
    );
    await waitForQueueIdle(stack.service.db);
    // In the dashboard: a contractor added by hand, and company admin granted to ann by hand.
    const added = await dashboard({
      action: "add-account",
      email: "contractor@example.com",
      actor: "ops-admin@example.com",
      permissions: {
        companyPermissions: [],
        appGroup: [{ appGroupName: "EU Production", appGroupPermissions: ["basic_access"] }],
      },
    });
    expect(added.status, added.text).toBe(201);
    const granted = await dashboard({
      action: "update-permissions",
      email: "ann@example.com",
      actor: "ops-admin@example.com",
      permissions: { companyPermissions: ["admin"], appGroup: [MARKETING_WORKSPACE] },
    });
    expect(granted.status, granted.text).toBe(204);
    expect((await dashboard({ action: "sign-in", email: "ann@example.com", actor: "ann@example.com" })).status).toBe(
      204,
    );
    report = (await request(stack.emulator.url).get("/_emulator/security-events.csv")).text;
  }, 120_000);
  afterAll(() => stack?.close());

  it("finds at no call, confirms with one lookup, puts back with one read and one write, and leaves its own writes alone", async () => {
    const before = await calls();
    const routesBefore = await byRoute();
    const imported = await importReport(report);
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body).toMatchObject({
      imported: 4,
      duplicates: 0,
      findings: { ownWrites: 1, candidates: 1, outsideChanges: 1, activity: 1 },
    });

    await eventually("ann holds the mapping's grants again", async () => {
      const ann = (await emulatorState(stack)).dashboardUsers.find((u) => u.userName === "ann@example.com");
      return ann && ann.permissions.companyPermissions.length === 0;
    });
    await eventually("the contractor is confirmed", async () => {
      const res = await adminApi(stack)("/platform/unmanaged");
      return (res.body as { accounts: { userName: string; state: string }[] }).accounts.some(
        (a) => a.userName === "contractor@example.com" && a.state === "confirmed",
      );
    });
    await waitForQueueIdle(stack.service.db);
    const after = await calls();
    // Finding spent nothing: the only calls are one lookup (the contractor), one GET and one PUT
    // (ann), on the emulator and in the ledger alike. (The mend may start before the import answers.)
    expect(after.emulator - before.emulator).toBe(3);
    expect(after.ledger - before.ledger).toBe(3);
    const routesAfter = await byRoute();
    expect(
      Object.fromEntries(Object.entries(routesAfter).map(([route, n]) => [route, n - routesBefore[route]!])),
    ).toEqual({
      "POST /scim/v2/Users": 0,
      "GET /scim/v2/Users": 1,
      "GET /scim/v2/Users/{id}": 1,
      "PUT /scim/v2/Users/{id}": 1,
      "DELETE /scim/v2/Users/{id}": 0,
    });

    const log = await adminApi(stack)("/log?limit=20");
    const words = JSON.stringify(log.body);
    expect(words).toContain("changed in the platform's dashboard by ops-admin@example.com");
    expect(words).toContain("removed again: admin");
    const unmanaged = await adminApi(stack)("/platform/unmanaged");
    expect((unmanaged.body as { accounts: { userName: string }[] }).accounts.map((a) => a.userName)).toEqual([
      "contractor@example.com",
    ]);
  });

  it("imports the same report again at no cost: nothing new, nothing spent", async () => {
    const before = await calls();
    const again = await importReport(report);
    expect(again.body).toMatchObject({ imported: 0, duplicates: 4 });
    await waitForQueueIdle(stack.service.db);
    expect(await calls()).toEqual(before);
  });
});

describe("the platform's daily export, from the emulator's bucket to the connector", () => {
  let s3: TestS3;
  let stack: Stack;

  beforeAll(async () => {
    s3 = await startS3();
    await s3.bucket("exports");
    // Credentials through the SDK's default chain, as a deployment gives them.
    Object.assign(process.env, S3RVER_KEYS);
    stack = await startStack({
      emulator: {
        securityExport: { uri: "s3://exports/security", endpoint: s3.endpoint, credentials: S3RVER_CREDENTIALS },
      },
      env: {
        SECURITY_EVENTS_S3_URI: "s3://exports/security/",
        SECURITY_EVENTS_S3_ENDPOINT: s3.endpoint,
        SECURITY_EVENTS_S3_REGION: "us-east-1",
      },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await s3?.stop();
  });

  it("reads the day the emulator exported once, and finds the account made by hand in it", async () => {
    const added = await request(stack.emulator.url)
      .post("/_emulator/dashboard")
      .send({ action: "add-account", email: "contractor@example.com", actor: "ops-admin@example.com" });
    expect(added.status, added.text).toBe(201);
    const exported = await request(stack.emulator.url).post("/_emulator/security-events/export").send({});
    expect(exported.status, exported.text).toBe(200);
    const [key] = (exported.body as { keys: string[] }).keys;

    const imports = () =>
      stack.service.db.query<{ source: string; imported: number }>(
        `SELECT source, imported FROM platform_event_imports ORDER BY id`,
      );
    // A poll answers undefined while another (the scheduler's own, from its start) holds the export's lock.
    await eventually("the exported day is imported", async () => {
      await stack.service.exportPoller!.poll();
      return (await imports()).length > 0;
    });
    expect(await stack.service.exportPoller!.poll()).toMatchObject({ objects: 0, imported: 0 });
    expect(await imports()).toEqual([{ source: `s3://exports/${key}`, imported: 1 }]);
    await eventually("the contractor is confirmed", async () => {
      const res = await adminApi(stack)("/platform/unmanaged");
      return (res.body as { accounts: { userName: string; state: string; addedBy: string }[] }).accounts.some(
        (a) =>
          a.userName === "contractor@example.com" && a.state === "confirmed" && a.addedBy === "ops-admin@example.com",
      );
    });
  });
});

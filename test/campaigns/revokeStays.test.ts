import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_TOKEN,
  adminApi,
  emulatorState,
  idp,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * A campaign's revoke stays revoked while the IdP still grants it: deactivating the user and
 * re-activating it must not end the deny (issue 34, finding 2). With the user inactive every grant
 * looked "no longer granted", the deny ended, and the re-activation brought the grant back.
 */

const MAPPING = `
department: { default: engineering }
rules:
  - group: Marketing
    workspaces:
      - name: EU Production
        permissions: [basic_access, send_campaigns_canvases]
`;

describe("a revoked grant through a deactivation and a re-activation", () => {
  let stack: Stack;
  let alice: string;
  const post = (path: string, body: object) =>
    request(stack.service.url).post(`/admin/api${path}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`).send(body);
  const held = async () =>
    (await emulatorState(stack)).dashboardUsers.find((u) => u.userName === "alice@example.com")?.permissions.appGroup[0]
      ?.appGroupPermissions ?? [];
  const setActive = (active: boolean) =>
    idp(stack).patch(`/Users/${alice}`, [{ op: "replace", path: "active", value: active }]);

  beforeAll(async () => {
    stack = await startStack({ mapping: MAPPING, env: { RECONCILE_DEPROVISION_GRACE_MS: "3600000" } });
    alice = await idp(stack).createUser("alice@example.com");
    await idp(stack).createGroup("Marketing", [alice]);
    await waitForQueueIdle(stack);
  });
  afterAll(async () => stack?.close());

  it("keeps the deny: the grant does not come back on re-activation", async () => {
    const started = await post("/campaigns", {
      name: "Q4",
      scope: { kind: "everything" },
      dueAt: new Date(Date.now() + 86_400_000).toISOString(),
      fallbackReviewer: "security@example.com",
    });
    expect(started.status, started.text).toBe(201);
    const items = (await adminApi(stack)(`/campaigns/${started.body.id}/items?as=security@example.com`)).body.items as {
      id: string;
      permission: string;
    }[];
    const send = items.find((i) => i.permission === "send_campaigns_canvases")!;
    const revoked = await post(`/campaigns/${started.body.id}/decisions`, {
      as: "security@example.com",
      decision: "revoke",
      comment: "no longer sends",
      items: [send.id],
    });
    expect(revoked.status, revoked.text).toBe(200);
    await eventually("the revoke on the platform", async () => !(await held()).includes("send_campaigns_canvases"));

    await setActive(false);
    await waitForQueueIdle(stack);
    expect(await held()).toEqual([]); // stripped, kept for the grace
    await setActive(true);
    await waitForQueueIdle(stack);

    expect(await held()).toEqual(["basic_access"]);
    const denies = (await adminApi(stack)(`/denies?user=${alice}&active=true`)).body.denies as unknown[];
    expect(denies).toHaveLength(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENTERPRISE, startScimHarness, userBody, type ScimHarness } from "../support/scimHarness.js";

/** Seeded random input of every shape: whatever a client sends, the answer is never a 5xx. */
describe("SCIM robustness", () => {
  let h: ScimHarness;
  let userId = "";
  let groupId = "";
  beforeAll(async () => {
    h = await startScimHarness();
    userId = (await h.post("/Users", userBody())).body.id;
    groupId = (await h.post("/Groups", { displayName: "Fuzz", members: [{ value: userId }] })).body.id;
  });
  afterAll(async () => {
    await h?.close();
  });

  let seed = 20261121;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const NAMES = [
    "userName",
    "active",
    "name",
    "givenName",
    "emails",
    "value",
    "type",
    "primary",
    "members",
    "display",
    "displayName",
    "externalId",
    "id",
    "meta",
    "schemas",
    ENTERPRISE,
    `${ENTERPRISE}:manager`,
    "manager",
    "Operations",
    "op",
    "path",
    "groups",
    "password",
    "__proto__",
    "x".repeat(300),
    "\u0000",
    "é",
  ];
  const STRINGS = [
    "",
    "True",
    "false",
    "a@b.c",
    "\u0000",
    "😀",
    "x".repeat(5000),
    'emails[type eq "work"].value',
    'members[value eq "x"]',
    "6f1f0d7e-0000-4000-8000-000000000000",
    "Replace",
    "remove",
    "add",
    "urn:x",
  ];
  const value = (depth: number): unknown => {
    const r = random();
    if (depth > 3 || r < 0.3) return pick<unknown>([null, true, false, 0, -1, 1.5, 1e308, ...STRINGS]);
    if (r < 0.6) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(random() * 5) }, () => [pick(NAMES), value(depth + 1)]));
  };
  const operations = () => ({
    Operations: Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
      op: pick(["add", "Replace", "remove", "x", 5]),
      path: pick([undefined, ...NAMES, ...STRINGS]),
      value: value(1),
    })),
  });
  const FILTER_PARTS = [
    "userName",
    "eq",
    "ne",
    "co",
    "sw",
    "pr",
    "gt",
    "and",
    "or",
    "not",
    "(",
    ")",
    "[",
    "]",
    '"x"',
    "true",
    "null",
    "1",
    "emails",
    "members.value",
    "meta.created",
    '"2020-01-01T00:00:00Z"',
    "name.givenName",
    "\u0000",
  ];
  const filter = () => Array.from({ length: 1 + Math.floor(random() * 8) }, () => pick(FILTER_PARTS)).join(" ");

  it("answers 300 random requests without a single 5xx", async () => {
    const failures: string[] = [];
    for (let i = 0; i < 300; i++) {
      const kind = i % 6;
      const body = kind < 2 ? value(0) : operations();
      const res =
        kind === 0
          ? await h.post("/Users", body)
          : kind === 1
            ? await h.post("/Groups", body)
            : kind === 2
              ? await h.patch(`/Users/${userId}`, body)
              : kind === 3
                ? await h.patch(`/Groups/${groupId}`, body)
                : kind === 4
                  ? await h.put(`/Users/${userId}`, { ...(value(0) as object), userName: pick(STRINGS) })
                  : await h.get(
                      `/${pick(["Users", "Groups"])}?filter=${encodeURIComponent(filter())}&attributes=${encodeURIComponent(pick(NAMES))}`,
                    );
      if (res.status >= 500)
        failures.push(`${kind} ${res.status} ${JSON.stringify(body).slice(0, 300)} → ${res.text.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });
});

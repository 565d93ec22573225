import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, paginate } from "../../src/emulator/engagement/cdiPages.js";
import { parseDashboardUser } from "../../src/emulator/dashboard/users.js";
import { FaultList, parseFaultSpec } from "../../src/emulator/pipeline/faults.js";
import { parseInvalidPhoneQuery, selectInvalidPhones } from "../../src/emulator/engagement/invalidPhones.js";
import { eventPropertiesProblem, isE164, parseDateTime } from "../../src/emulator/validation.js";
import { dashboardUser } from "./harness.js";

/** Table-driven checks of the pure rules the routes are built from. */

describe("E.164 phone numbers", () => {
  it.each([
    ["+15551234567", true],
    ["+442071838750", true],
    ["15551234567", false],
    ["+0123", false],
    ["+1 555 123", false],
    ["+1234567890123456", false],
  ])("%s → %s", (value, expected) => expect(isE164(value)).toBe(expected));
});

describe("datetimes: ISO 8601 or yyyy-MM-dd'T'HH:mm:ss:SSSZ", () => {
  it.each([
    ["2026-01-01T10:00:00Z", "2026-01-01T10:00:00.000Z"],
    ["2026-01-01T10:00:00.123+02:00", "2026-01-01T08:00:00.123Z"],
    ["2013-02-10T10:00:00:000Z", "2013-02-10T10:00:00.000Z"],
    ["2013-02-10T10:00:00:250-0100", "2013-02-10T11:00:00.250Z"],
    ["2026-01-01", "2026-01-01T00:00:00.000Z"],
    ["yesterday", undefined],
    ["2026-13-01T00:00:00Z", undefined],
  ])("%s", (value, iso) => expect(parseDateTime(value)?.toISOString()).toBe(iso));
});

describe("event properties rules", () => {
  it.each([
    [{ a: 1, b: "x", c: true, d: "2026-01-01T00:00:00Z", e: [1, 2], f: { g: 1 } }],
    [{ flat: "x".repeat(255), more: "y".repeat(255) }],
  ])("accepts %#", (properties) => {
    expect(eventPropertiesProblem(properties)).toBeUndefined();
  });
  it.each([
    [{ "": 1 }, "non-empty"],
    [{ ["x".repeat(256)]: 1 }, "255"],
    [{ $x: 1 }, "$"],
    [{ s: "x".repeat(256) }, "255"],
    [{ arr: ["2026-01-01"] }, "datetimes"],
    [{ big: { s: "x".repeat(51 * 1024) } }, "50 KB"],
  ])("refuses %# naming the problem", (properties, problem) => {
    expect(eventPropertiesProblem(properties)).toContain(problem);
  });
});

describe("dashboard user parsing", () => {
  it("accepts the complete resource and ignores response-only ids", () => {
    const parsed = parseDashboardUser({ ...dashboardUser("a@b.co"), id: "ignored" });
    expect(parsed.ok).toBe(true);
  });
  it.each([
    [{ schemas: ["urn:other"] }, "schemas"],
    [{ userName: "not-email" }, "userName"],
    [{ name: { givenName: "A" } }, "name"],
    [{ department: "" }, "department"],
    [{ permissions: { companyPermissions: "admin" } }, "companyPermissions"],
    [{ permissions: { appGroup: [{ appGroupPermissions: [] }] } }, "appGroupName"],
    [{ permissions: { appGroup: [{ appGroupName: "W", team: [{}] }] } }, "teamName"],
    [{ permissions: { appGroup: [{ appGroupName: "W", appGroupPermissionSets: [{}] }] } }, "appGroupPermissionSetName"],
  ])("%# rejects with a detail naming the field", (override, field) => {
    const parsed = parseDashboardUser({ ...dashboardUser("a@b.co"), ...override });
    expect(parsed).toMatchObject({ ok: false, detail: expect.stringContaining(field) });
  });
});

describe("cdi cursors", () => {
  it("round-trip and bind to their list", () => {
    expect(decodeCursor(encodeCursor("integrations", 10), "integrations", 25)).toBe(10);
    expect(decodeCursor(encodeCursor("integrations", 10), "jobs:x", 25)).toBeUndefined();
    expect(decodeCursor(encodeCursor("integrations", 30), "integrations", 25)).toBeUndefined();
    expect(decodeCursor(encodeCursor("integrations", 5), "integrations", 25)).toBeUndefined();
    expect(decodeCursor("not base64!", "integrations", 25)).toBeUndefined();
  });
  it.each([
    [10, 0, undefined],
    [11, 0, "next"],
    [25, 10, "prev,next"],
    [25, 20, "prev"],
  ])("%i items at offset %i → Link rels %s", (total, offset, rels) => {
    const page = paginate(
      Array.from({ length: total }, (_, i) => i),
      offset,
      "/p",
      "s",
    );
    expect(page.link ? [...page.link.matchAll(/rel=(\w+)/g)].map((m) => m[1]).join(",") : undefined).toBe(rels);
  });
});

describe("faults", () => {
  it("parseFaultSpec defaults and bounds", () => {
    expect(parseFaultSpec({ path: "/scim", status: 503 })).toEqual({
      method: undefined,
      path: "/scim",
      status: 503,
      count: undefined,
      probability: undefined,
      delayMs: 0,
      dropConnection: false,
    });
    expect(() => parseFaultSpec({ path: "/x", status: 99 })).toThrow();
    expect(() => parseFaultSpec({ path: "/x", status: 500, probability: 2 })).toThrow();
  });
  it("count is consumed and method/prefix must both match", () => {
    const faults = new FaultList(() => 0.5);
    faults.add(parseFaultSpec({ method: "get", path: "/scim", status: 500, count: 1 }));
    expect(faults.fire("POST", "/scim/v2/Users")).toBeUndefined();
    expect(faults.fire("GET", "/email")).toBeUndefined();
    expect(faults.fire("GET", "/scim/v2/Users/1")?.status).toBe(500);
    expect(faults.fire("GET", "/scim/v2/Users/1")).toBeUndefined();
  });
  it("probability fires when the draw is below p", () => {
    const faults = new FaultList(() => 0.3);
    faults.add(parseFaultSpec({ path: "/", status: 500, probability: 0.25 }));
    expect(faults.fire("GET", "/a")).toBeUndefined();
    faults.add(parseFaultSpec({ path: "/", status: 501, probability: 0.5 }));
    expect(faults.fire("GET", "/a")?.status).toBe(501);
  });
});

describe("invalid phone selection", () => {
  const records = [
    { phone: "+15550000001", invalid_detected_at: "2026-01-01T00:00:00Z", reason: "deactivated" as const },
    { phone: "+15550000002", invalid_detected_at: "2026-01-02T00:00:00Z", reason: "provider_error" as const },
  ];
  it("end_date midnight is exclusive, start_date midnight inclusive", () => {
    expect(
      selectInvalidPhones(records, parseInvalidPhoneQuery({ start_date: "2026-01-01", end_date: "2026-01-02" })).map(
        (r) => r.phone,
      ),
    ).toEqual(["+15550000001"]);
  });
  it("only start_date: from then on; only end_date: until then", () => {
    expect(
      selectInvalidPhones(records, parseInvalidPhoneQuery({ start_date: "2026-01-02" })).map((r) => r.phone),
    ).toEqual(["+15550000002"]);
    expect(
      selectInvalidPhones(records, parseInvalidPhoneQuery({ end_date: "2026-01-02" })).map((r) => r.phone),
    ).toEqual(["+15550000001"]);
  });
});

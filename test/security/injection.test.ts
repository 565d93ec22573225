import request from "supertest";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { csrfFrom } from "../support/adminHarness.js";
import { ADMIN_TOKEN, IDP_TOKEN, idp, startStack, type Stack } from "../support/stack.js";
import { ENTERPRISE } from "../support/constants.js";

/**
 * SQL is built only with parameters. Injection strings go into every SCIM filter operator and
 * attribute, every list parameter, path ids, PATCH value filters, the admin API's query
 * parameters and the admin UI's filters. Nothing may answer 5xx or show SQL error text, the
 * tables stay as they were, and the answers are the literal ones (`userName eq "x' OR 1=1 --"`
 * finds nothing; `co "%"` finds only values holding a percent sign).
 */

const INJECTIONS = [
  "' OR 1=1 --",
  "' OR '1'='1",
  '"; DROP TABLE idp_users; --',
  "'); DROP TABLE idp_users; --",
  "x' UNION SELECT token_hash::text FROM scim_tokens --",
  "\\",
  "\\'",
  "'\\",
  "\u2019 OR 1=1 --", // right single quotation mark
  "\u02bc OR \u02bc1\u02bc=\u02bc1", // modifier letter apostrophe
  "\uff07 OR 1=1", // fullwidth apostrophe
  "$1",
  "$1 OR 1=1",
  "/* comment */",
  "*/ OR 1=1 /*",
  "-- ",
  "%",
  "_",
  "%%",
  "a%",
  "%_%",
  "\\%",
  "1; SELECT pg_sleep(5)",
  "' || pg_sleep(5) || '",
  "$$; DROP TABLE idp_users; $$",
  "E'\\x27'",
  ":param",
  "?",
];
const SQL_ERROR =
  /syntax error|SQLSTATE|QueryFailedError|relation "|column "|unterminated|invalid input syntax|operator does not exist|at character|ERROR:/i;

const USER_ATTRIBUTES = [
  "userName",
  "displayName",
  "externalId",
  "id",
  "active",
  "title",
  "name.givenName",
  "name.familyName",
  "emails",
  "emails.value",
  "emails.type",
  `${ENTERPRISE}:department`,
  `${ENTERPRISE}:manager.value`,
  "meta.created",
  "meta.lastModified",
  "meta.resourceType",
  "groups.value",
];
const GROUP_ATTRIBUTES = [
  "displayName",
  "externalId",
  "id",
  "members",
  "members.value",
  "members.display",
  "meta.created",
];
const OPS = ["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"];

type Seeded = { userName: string; displayName: string };
const SEEDED: Seeded[] = [
  { userName: "alice@example.com", displayName: "100% Alice" },
  { userName: "bob@example.com", displayName: "Bob_Builder" },
  { userName: "carol@example.com", displayName: "O'Brien Carol" },
  { userName: "dave@example.com", displayName: "Dave \\ Backslash" },
  { userName: "under_score@example.com", displayName: "Plain Name" },
  { userName: "x' or 1=1 --@example.com", displayName: "Literal Injection" },
];

describe("SQL injection strings are only ever data", () => {
  let stack: Stack;
  let userIds: string[] = [];
  let groupId = "";
  let tablesBefore: string[] = [];
  let countsBefore: Record<string, number> = {};
  let sent = 0;

  const scim = (method: "get" | "post" | "put" | "patch" | "delete", path: string, body?: unknown) => {
    sent++;
    const req = request(stack.service.url)[method](`/scim/v2${path}`).set("Authorization", `Bearer ${IDP_TOKEN}`);
    return body === undefined ? req : req.set("Content-Type", "application/scim+json").send(JSON.stringify(body));
  };
  const api = (method: "get" | "post", path: string) => {
    sent++;
    return request(stack.service.url)[method](`/admin/api${path}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`);
  };
  const problems: string[] = [];
  const check = (what: string, res: request.Response, allowed: number[] = [200, 400, 404]) => {
    if (res.status >= 500 || !allowed.includes(res.status))
      problems.push(`${what} → ${res.status} ${res.text.slice(0, 200)}`);
    if (SQL_ERROR.test(res.text)) problems.push(`${what} → SQL error text: ${res.text.slice(0, 300)}`);
  };
  const q = encodeURIComponent;

  async function snapshot() {
    const tables: { t: string }[] = await stack.database.db.query(
      `SELECT table_schema || '.' || table_name AS t FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
    );
    const counts: Record<string, number> = {};
    for (const table of [
      "idp_users",
      "idp_groups",
      "idp_group_members",
      "scim_tokens",
      "reconcile_log",
      "platform_accounts",
    ]) {
      counts[table] = (await stack.database.db.query(`SELECT count(*)::int AS n FROM ${table}`))[0].n;
    }
    return { tables: tables.map((r) => r.t), counts };
  }

  beforeAll(async () => {
    stack = await startStack({ workers: false });
    const client = idp(stack);
    for (const s of SEEDED) {
      const res = await client.send("post", "/Users", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName: s.userName,
        displayName: s.displayName,
        name: { givenName: s.displayName, familyName: "Seed" },
        emails: [{ value: s.userName, type: "work", primary: true }],
        active: true,
      });
      expect(res.status, res.text).toBe(201);
      userIds.push(res.body.id as string);
    }
    groupId = await client.createGroup("Marketing", userIds.slice(0, 3));
    // Reconcile once, so the reconciliation log has rows for the admin filters to search.
    const worker = stack.service.reconciliation!.worker;
    for (let i = 0; i < 50 && (await worker.runOnce()); i++) {
      /* drain */
    }
    const before = await snapshot();
    tablesBefore = before.tables;
    countsBefore = before.counts;
    expect(countsBefore.reconcile_log).toBeGreaterThan(0);
  }, 120_000);
  afterAll(async () => stack?.close());
  beforeEach(() => {
    problems.length = 0;
  });

  it("every filter attribute × operator × injection string: no 5xx, no SQL text, and eq finds only a literal match", async () => {
    const cases: [string, string][] = [];
    for (const [resource, attributes] of [
      ["Users", USER_ATTRIBUTES],
      ["Groups", GROUP_ATTRIBUTES],
    ] as const) {
      for (const attribute of attributes)
        for (const op of OPS)
          for (const value of INJECTIONS) cases.push([resource, `${attribute} ${op} ${JSON.stringify(value)}`]);
      // Inside value filters and not(), too.
      for (const value of INJECTIONS) {
        cases.push([resource, `${resource === "Users" ? "emails" : "members"}[value eq ${JSON.stringify(value)}]`]);
        cases.push([
          resource,
          `not (displayName eq ${JSON.stringify(value)}) and displayName sw ${JSON.stringify(value)}`,
        ]);
      }
    }
    const totals = new Map<string, number>();
    const queue = [...cases];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const [resource, filter] = next;
          const res = await scim("get", `/${resource}?filter=${q(filter)}`);
          check(`${resource} ${filter}`, res, [200, 400]);
          if (res.status === 200) totals.set(`${resource} ${filter}`, res.body.totalResults as number);
        }
      }),
    );
    expect(problems).toEqual([]);
    // eq on a string attribute finds nothing for an injection string (none is a stored value)…
    for (const value of INJECTIONS) {
      for (const attribute of ["userName", "displayName", "externalId", "name.givenName", "emails.value"]) {
        expect(totals.get(`Users ${attribute} eq ${JSON.stringify(value)}`), `${attribute} eq ${value}`).toBe(0);
      }
      // …and ne finds every user: the string did not change the query's shape.
      expect(totals.get(`Users userName ne ${JSON.stringify(value)}`), `userName ne ${value}`).toBe(SEEDED.length);
    }
    console.log(`injection: ${cases.length} filters sent, ${[...totals.values()].length} answered 200`);
  }, 180_000);

  it("LIKE wildcards and quotes are literal: co, sw and ew match the characters themselves", async () => {
    const names = async (filter: string) => {
      const res = await scim("get", `/Users?filter=${q(filter)}&count=100`);
      expect(res.status, `${filter}: ${res.text}`).toBe(200);
      return (res.body.Resources as { userName: string }[]).map((u) => u.userName).sort();
    };
    expect(await names('displayName co "%"')).toEqual(["alice@example.com"]);
    expect(await names('displayName co "_"')).toEqual(["bob@example.com"]);
    expect(await names('displayName sw "%"')).toEqual([]);
    expect(await names('displayName sw "100%"')).toEqual(["alice@example.com"]);
    expect(await names('displayName ew "%"')).toEqual([]);
    expect(await names('displayName co "\'"')).toEqual(["carol@example.com"]);
    expect(await names('displayName co "\\\\"')).toEqual(["dave@example.com"]);
    expect(await names('userName co "_"')).toEqual(["under_score@example.com"]);
    expect(await names('userName sw "_"')).toEqual([]);
    expect(await names('userName co "%"')).toEqual([]);
    expect(await names('userName eq "x\' or 1=1 --@example.com"')).toEqual(["x' or 1=1 --@example.com"]);
    expect(await names('userName eq "X\' OR 1=1 --@EXAMPLE.COM"')).toEqual(["x' or 1=1 --@example.com"]); // case-insensitive, still literal
    expect(await names('userName eq "x\' OR 1=1 --"')).toEqual([]);
    expect(await names('emails[value co "%"]')).toEqual([]);
    expect(await names('emails[value sw "under_"]')).toEqual(["under_score@example.com"]);
  });

  it("list parameters, path ids and PATCH value filters take injection strings as data", async () => {
    for (const value of INJECTIONS) {
      for (const resource of ["Users", "Groups"]) {
        for (const param of ["sortBy", "sortOrder", "startIndex", "count", "attributes", "excludedAttributes"]) {
          check(`${resource}?${param}=${value}`, await scim("get", `/${resource}?${param}=${q(value)}`), [200, 400]);
        }
        check(`GET /${resource}/${value}`, await scim("get", `/${resource}/${q(value)}`), [404, 400]);
        check(`DELETE /${resource}/${value}`, await scim("delete", `/${resource}/${q(value)}`), [404, 400]);
        check(
          `PUT /${resource}/${value}`,
          await scim("put", `/${resource}/${q(value)}`, { userName: "nobody@example.com", displayName: "n" }),
          [404, 400],
        );
        check(
          `PATCH /${resource}/${value}`,
          await scim("patch", `/${resource}/${q(value)}`, {
            schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
            Operations: [{ op: "replace", path: "displayName", value: "n" }],
          }),
          [404, 400],
        );
        check(
          `GET /${resource}/<id>?attributes=${value}`,
          await scim("get", `/${resource}/${resource === "Users" ? userIds[0] : groupId}?attributes=${q(value)}`),
          [200, 400],
        );
      }
      // SearchRequest bodies (POST .search) carry the same parameters as JSON members.
      for (const path of ["/.search", "/Users/.search", "/Groups/.search"]) {
        const search = { schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"] };
        check(
          `POST ${path} filter ${value}`,
          await scim("post", path, {
            ...search,
            filter: `displayName eq ${JSON.stringify(value)}`,
            sortBy: "displayName",
          }),
          [200, 400],
        );
        check(
          `POST ${path} sortBy ${value}`,
          await scim("post", path, { ...search, sortBy: value, sortOrder: value, attributes: [value] }),
          [200, 400],
        );
      }
      // A value filter that would match everything if it were SQL removes nothing.
      const patch = (path: string, body: unknown) =>
        scim("patch", path, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [body] });
      check(
        `remove emails[value eq ${value}]`,
        await patch(`/Users/${userIds[1]}`, { op: "remove", path: `emails[value eq ${JSON.stringify(value)}]` }),
        [200, 204, 400],
      );
      check(
        `remove emails[value co ${value}]`,
        await patch(`/Users/${userIds[1]}`, { op: "remove", path: `emails[value co ${JSON.stringify(value)}]` }),
        [200, 204, 400],
      );
      check(
        `remove members[value eq ${value}]`,
        await patch(`/Groups/${groupId}`, { op: "remove", path: `members[value eq ${JSON.stringify(value)}]` }),
        [200, 204, 400],
      );
      check(
        `add member ${value}`,
        await patch(`/Groups/${groupId}`, { op: "add", path: "members", value: [{ value }] }),
        [200, 204, 400, 404],
      );
    }
    expect(problems).toEqual([]);
    const bob = await scim("get", `/Users/${userIds[1]}`);
    expect(bob.body.emails).toEqual([expect.objectContaining({ value: "bob@example.com" })]);
    const group = await scim("get", `/Groups/${groupId}`);
    expect((group.body.members as { value: string }[]).map((m) => m.value).sort()).toEqual(userIds.slice(0, 3).sort());
  }, 120_000);

  it("the admin JSON API's query parameters and path ids", async () => {
    const alice = await api("get", `/log?user=${q("alice@example.com")}`);
    expect(alice.status).toBe(200);
    expect(alice.body.entries.length).toBeGreaterThan(0);
    for (const value of INJECTIONS) {
      for (const param of ["user", "action", "outcome", "trigger", "since", "until", "cursor", "limit"]) {
        const res = await api("get", `/log?${param}=${q(value)}`);
        check(`/log?${param}=${value}`, res, [200, 400]);
        // A user filter that parses matches nobody: the value is data, never SQL.
        const matched = param === "user" && res.status === 200 ? res.body.entries : [];
        expect(matched, `user=${value}`).toEqual([]);
      }
      check(
        `/log?user&action`,
        await api("get", `/log?user=${q(value)}&action=${q(value)}&since=2020-01-01T00:00:00Z&cursor=1`),
        [200, 400],
      );
      for (const path of [
        "/log/",
        "/runs/",
        "/mirror/log?kind=",
        "/mirror/log?cursor=",
        "/mirror/parked?kind=",
        "/mirror/parked?cursor=",
        "/approvals?all=",
      ]) {
        check(`GET ${path}${value}`, await api("get", `${path}${q(value)}`), [200, 400, 404]);
      }
      check(`POST approvals/${value}/approve`, await api("post", `/approvals/${q(value)}/approve`), [400, 404]);
      check(`POST approvals/<id>/${value}`, await api("post", `/approvals/${userIds[0]}/${q(value)}`), [400, 404]);
      check(`POST users/${value}/reconcile`, await api("post", `/users/${q(value)}/reconcile`), [400, 404]);
      check(`POST quarantine/${value}/resume`, await api("post", `/quarantine/${q(value)}/resume`), [400, 404]);
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it("the admin UI's filters and ids", async () => {
    const agent = request.agent(stack.service.url);
    const csrf = csrfFrom((await agent.get("/admin/login")).text);
    expect((await agent.post("/admin/login").type("form").send({ _csrf: csrf, token: ADMIN_TOKEN })).status).toBe(303);
    const page = async (path: string) => {
      sent++;
      const res = await agent.get(path);
      check(`UI ${path}`, res, [200, 400, 404]);
      return res;
    };
    for (const value of INJECTIONS) {
      for (const param of ["user", "action", "outcome", "trigger", "from", "to", "page"]) {
        await page(`/admin/log?${param}=${q(value)}`);
        await page(`/admin/log/export.csv?${param}=${q(value)}`);
        await page(`/admin/log/export.json?${param}=${q(value)}`);
      }
      const users = await page(`/admin/users?q=${q(value)}&page=${q(value)}`);
      // A user search is a literal prefix: no injection string, wildcard or quote lists anyone...
      for (const s of SEEDED.filter((u) => !u.userName.includes("'")))
        expect(users.text, `q=${value}`).not.toContain(s.userName);
      await page(`/admin/users/${q(value)}`);
      await page(`/admin/log/${q(value)}`);
    }
    // ...while a real prefix does, wildcards inside it taken literally.
    const under = await page(`/admin/users?q=${q("under_")}`);
    expect(under.text).toContain("under_score@example.com");
    expect(under.text).not.toContain("bob@example.com");
    expect((await page(`/admin/users?q=${q("a")}`)).text).toContain("alice@example.com");
    expect(problems).toEqual([]);
  }, 120_000);

  it("afterwards every table is still there with the same rows", async () => {
    const after = await snapshot();
    expect(after.tables).toEqual(tablesBefore);
    expect(after.counts.idp_users).toBe(countsBefore.idp_users);
    expect(after.counts.idp_groups).toBe(countsBefore.idp_groups);
    expect(after.counts.idp_group_members).toBe(countsBefore.idp_group_members);
    expect(after.counts.scim_tokens).toBe(countsBefore.scim_tokens);
    expect(after.counts.platform_accounts).toBe(countsBefore.platform_accounts);
    console.log(`injection: ${sent} requests with injection strings, ${problems.length} problems`);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GROUP_SCHEMA, startScimHarness, userBody, type ScimHarness } from "../support/scimHarness.js";

/** RFC 7644 §3.4.3 (POST .search) and §3.4.2.3 (sortBy, sortOrder). */

const SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";
const LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

type Resource = {
  id: string;
  userName?: string;
  displayName?: string;
  externalId?: string;
  members?: unknown[];
  meta: { resourceType: string };
};

describe("RFC 7644 §3.4.3 search with POST, §3.4.2.3 sorting", () => {
  let h: ScimHarness;
  const users: Resource[] = [];
  const groups: Resource[] = [];
  // Created in this order (so meta.created ascends this way), names deliberately out of order and mixed case.
  const names = ["delta", "Alpha", "charlie", "Bravo"];

  beforeAll(async () => {
    h = await startScimHarness();
    for (const [i, name] of names.entries()) {
      users.push(
        (
          await h.post(
            "/Users",
            userBody({ userName: `${name}@srch.example.com`, displayName: `${name} user`, externalId: `ext-${3 - i}` }),
          )
        ).body,
      );
    }
    groups.push(
      (
        await h.post("/Groups", {
          schemas: [GROUP_SCHEMA],
          displayName: "srch Zulu",
          members: [{ value: users[0]!.id }],
        })
      ).body,
    );
    groups.push((await h.post("/Groups", { schemas: [GROUP_SCHEMA], displayName: "srch alpha" })).body);
  });
  afterAll(async () => {
    await h?.close();
  });

  const search = (path: string, body: Record<string, unknown>) => h.post(path, { schemas: [SEARCH], ...body });
  const userNames = (res: { body: { Resources: Resource[] } }) => res.body.Resources.map((r) => r.userName);

  it("POST /Users/.search answers a SearchRequest as a ListResponse, with filter, paging and projection", async () => {
    const res = await search("/Users/.search", {
      filter: 'userName ew "@srch.example.com"',
      attributes: ["userName"],
      sortBy: "userName",
      startIndex: 2,
      count: 2,
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/application\/scim\+json/);
    expect(res.body).toMatchObject({ schemas: [LIST], totalResults: 4, startIndex: 2, itemsPerPage: 2 });
    expect(res.body.Resources).toEqual([
      { schemas: expect.any(Array), id: users[3]!.id, userName: "Bravo@srch.example.com" },
      { schemas: expect.any(Array), id: users[2]!.id, userName: "charlie@srch.example.com" },
    ]);
    const excluded = await search("/Users/.search", {
      filter: 'userName eq "delta@srch.example.com"',
      excludedAttributes: ["emails", "name"],
    });
    expect(excluded.body.Resources[0].emails).toBeUndefined();
    expect(excluded.body.Resources[0].displayName).toBe("delta user");
  });

  it("POST /Groups/.search filters groups and keeps members only when asked", async () => {
    const res = await search("/Groups/.search", {
      filter: 'displayName sw "srch"',
      sortBy: "displayName",
      sortOrder: "descending",
    });
    expect(res.status).toBe(200);
    expect(res.body.Resources.map((g: Resource) => g.displayName)).toEqual(["srch Zulu", "srch alpha"]);
    expect(res.body.Resources[0].members).toHaveLength(1);
    const slim = await search("/Groups/.search", { filter: 'displayName sw "srch"', excludedAttributes: "members" });
    expect(slim.body.Resources.every((g: Resource) => g.members === undefined)).toBe(true);
  });

  it("POST /.search at the root spans Users and Groups", async () => {
    const all = await search("/.search", { filter: 'displayName sw "srch" or userName ew "@srch.example.com"' });
    expect(all.status).toBe(200);
    expect(all.body.totalResults).toBe(6);
    expect(all.body.Resources.map((r: Resource) => r.meta.resourceType).sort()).toEqual([
      "Group",
      "Group",
      "User",
      "User",
      "User",
      "User",
    ]);
    // userName exists only on Users: the groups simply do not match.
    const onlyUsers = await search("/.search", { filter: 'userName sw "alpha"' });
    expect(onlyUsers.body.Resources.map((r: Resource) => r.id)).toEqual([users[1]!.id]);
    // Sorted across both types by displayName, paged in the database.
    const sorted = await search("/.search", {
      filter: 'displayName sw "srch" or userName ew "@srch.example.com"',
      sortBy: "displayName",
      count: 3,
    });
    expect(sorted.body.totalResults).toBe(6);
    expect(sorted.body.Resources.map((r: Resource) => r.displayName)).toEqual([
      "Alpha user",
      "Bravo user",
      "charlie user",
    ]);
    const next = await search("/.search", {
      filter: 'displayName sw "srch" or userName ew "@srch.example.com"',
      sortBy: "displayName",
      startIndex: 4,
    });
    expect(next.body.Resources.map((r: Resource) => r.displayName)).toEqual(["delta user", "srch alpha", "srch Zulu"]);
    // An attribute neither type has is the client's mistake.
    const bad = await search("/.search", { filter: 'nickName eq "x" and nope eq "y"' });
    expect(bad.status).toBe(400);
    expect(bad.body.scimType).toBe("invalidFilter");
  });

  it("sorts on userName, displayName, externalId, meta.created and meta.lastModified, in SQL, both ways", async () => {
    const byName = await h.get(
      `/Users?filter=${encodeURIComponent('userName ew "@srch.example.com"')}&sortBy=userName`,
    );
    expect(userNames(byName)).toEqual(["Alpha", "Bravo", "charlie", "delta"].map((n) => `${n}@srch.example.com`));
    const desc = await h.get(
      `/Users?filter=${encodeURIComponent('userName ew "@srch.example.com"')}&sortBy=userName&sortOrder=descending`,
    );
    expect(userNames(desc)).toEqual(["delta", "charlie", "Bravo", "Alpha"].map((n) => `${n}@srch.example.com`));
    const byExternalId = await search("/Users/.search", {
      filter: 'userName ew "@srch.example.com"',
      sortBy: "externalId",
    });
    expect(byExternalId.body.Resources.map((r: Resource) => r.externalId)).toEqual([
      "ext-0",
      "ext-1",
      "ext-2",
      "ext-3",
    ]);
    const newestFirst = await search("/Users/.search", {
      filter: 'userName ew "@srch.example.com"',
      sortBy: "meta.created",
      sortOrder: "descending",
    });
    expect(newestFirst.body.Resources.map((r: Resource) => r.id)).toEqual([...users].reverse().map((u) => u.id));
    await h.patch(`/Users/${users[2]!.id}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", path: "nickName", value: "c" }],
    });
    const byModified = await search("/Users/.search", {
      filter: 'userName ew "@srch.example.com"',
      sortBy: "meta.lastModified",
      sortOrder: "descending",
      count: 1,
    });
    expect(byModified.body.Resources[0].id).toBe(users[2]!.id);
    const groupsByName = await h.get(
      `/Groups?filter=${encodeURIComponent('displayName sw "srch"')}&sortBy=urn:ietf:params:scim:schemas:core:2.0:Group:displayName`,
    );
    expect(groupsByName.body.Resources.map((g: Resource) => g.displayName)).toEqual(["srch alpha", "srch Zulu"]);
  });

  it("rejects what it cannot do with a clear 400", async () => {
    const unsortable = await h.get("/Users?sortBy=nickName");
    expect(unsortable.status).toBe(400);
    expect(unsortable.body.detail).toMatch(/userName, displayName, externalId, meta.created, meta.lastModified/);
    expect((await h.get("/Groups?sortBy=userName")).status).toBe(400);
    expect((await h.get("/Users?sortBy=userName&sortOrder=sideways")).body.scimType).toBe("invalidValue");
    expect((await h.post("/Users/.search", { schemas: ["urn:nope"] })).body.scimType).toBe("invalidSyntax");
    expect((await search("/Users/.search", { count: "ten" })).body.detail).toMatch(/count/);
    expect((await search("/Users/.search", { filter: 42 })).body.scimType).toBe("invalidFilter");
    expect((await search("/Users/.search", { filter: 'userName eq "unterminated' })).body.scimType).toBe(
      "invalidFilter",
    );
  });

  it("ServiceProviderConfig says sort is supported", async () => {
    expect((await h.get("/ServiceProviderConfig")).body.sort).toEqual({ supported: true });
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startClient, type Client } from "./harness.js";

const integration = (i: number) => ({
  integration_id: `int-${String(i).padStart(2, "0")}`,
  app_group_id: "ws-1",
  integration_name: `Warehouse ${i}`,
  integration_type: "cdi",
  integration_status: "active",
  contact_emails: "data@example.com",
  last_updated_at: "2026-01-01T00:00:00Z",
  warehouse_type: "snowflake",
  last_job_start_time: "2026-01-01T00:00:00Z",
  last_job_status: "success",
  next_scheduled_run: "2026-01-02T00:00:00Z",
});
const job = (i: number) => ({
  job_status: "success",
  sync_start_time: new Date(Date.UTC(2026, 0, 1, i)).toISOString(),
  sync_finish_time: new Date(Date.UTC(2026, 0, 1, i, 5)).toISOString(),
  last_timestamp_synced: new Date(Date.UTC(2026, 0, 1, i)).toISOString(),
  rows_synced: i * 10,
  rows_failed_with_errors: 0,
});

/** Parses `<path?cursor=c>; rel=prev, <...>; rel=next` into { prev, next } paths. */
function links(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? "").split(", ").filter(Boolean)) {
    const m = /^<([^>]+)>; rel=(prev|next)$/.exec(part);
    if (!m) throw new Error(`malformed Link part: ${part}`);
    out[m[2]!] = m[1]!;
  }
  return out;
}

describe("GET /cdi/integrations and /cdi/integrations/{integration_id}/job_sync_status", () => {
  let c: Client;
  beforeAll(async () => {
    c = await startClient();
  });
  afterAll(() => c.close());
  beforeEach(() => c.control("POST", "/reset"));

  it("10 or fewer integrations: results and message success, no Link header", async () => {
    await c.control("POST", "/fixtures", { integrations: [integration(1), integration(2)] });
    const res = await c.rest("GET", "/cdi/integrations");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ results: [integration(1), integration(2)], message: "success" });
    expect(res.headers.get("link")).toBeNull();
  });

  it("pagination: 10 per page, first call has no prev, the last page has no next, Link format exactly <path?cursor=…>; rel=…", async () => {
    await c.control("POST", "/fixtures", { integrations: Array.from({ length: 25 }, (_, i) => integration(i)) });
    const first = await c.rest("GET", "/cdi/integrations");
    expect(first.body.results).toHaveLength(10);
    expect(first.headers.get("link")).toMatch(/^<\/cdi\/integrations\?cursor=[A-Za-z0-9_-]+>; rel=next$/);
    const second = await c.rest("GET", links(first.headers.get("link")).next!);
    expect(second.body.results.map((r: { integration_id: string }) => r.integration_id)[0]).toBe("int-10");
    const secondLinks = links(second.headers.get("link"));
    expect(Object.keys(secondLinks).sort()).toEqual(["next", "prev"]);
    expect(second.headers.get("link")).toMatch(/^<[^>]+>; rel=prev, <[^>]+>; rel=next$/);
    const third = await c.rest("GET", secondLinks.next!);
    expect(third.body.results).toHaveLength(5);
    expect(Object.keys(links(third.headers.get("link")))).toEqual(["prev"]);
    const back = await c.rest("GET", links(third.headers.get("link")).prev!);
    expect(back.body.results).toEqual(second.body.results);
  });

  it("an invalid cursor is 400 with message Invalid cursor", async () => {
    await c.control("POST", "/fixtures", { integrations: Array.from({ length: 15 }, (_, i) => integration(i)) });
    for (const cursor of ["garbage!", "bm9wZQ", Buffer.from("integrations|999").toString("base64url")]) {
      const res = await c.rest("GET", `/cdi/integrations?cursor=${cursor}`);
      expect(res.status).toBe(400);
      expect(res.body.message).toBe("Invalid cursor");
    }
  });

  it("job_sync_status lists the integration's sync records, newest first, 10 per page with a Link header", async () => {
    await c.control("POST", "/fixtures", {
      integrations: [integration(1)],
      syncJobs: { "int-01": Array.from({ length: 12 }, (_, i) => job(i)) },
    });
    const res = await c.rest("GET", "/cdi/integrations/int-01/job_sync_status");
    expect(res.status).toBe(200);
    expect(res.body.message).toBe("success");
    expect(res.body.results).toHaveLength(10);
    expect(res.body.results[0]).toEqual(job(11));
    const next = links(res.headers.get("link")).next!;
    expect(next).toMatch(/^\/cdi\/integrations\/int-01\/job_sync_status\?cursor=/);
    const last = await c.rest("GET", next);
    expect(last.body.results).toEqual([job(1), job(0)]);
    expect(links(last.headers.get("link")).next).toBeUndefined();
  });

  it("job_sync_status with an unknown integration_id is 400 Invalid integration ID", async () => {
    const res = await c.rest("GET", "/cdi/integrations/nope/job_sync_status");
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("Invalid integration ID");
  });

  it("a cursor from one list is an Invalid cursor on another", async () => {
    await c.control("POST", "/fixtures", {
      integrations: Array.from({ length: 12 }, (_, i) => integration(i)),
      syncJobs: { "int-01": Array.from({ length: 12 }, (_, i) => job(i)) },
    });
    const cursor = links((await c.rest("GET", "/cdi/integrations")).headers.get("link")).next!.split("cursor=")[1];
    const res = await c.rest("GET", `/cdi/integrations/int-01/job_sync_status?cursor=${cursor}`);
    expect(res.body.message).toBe("Invalid cursor");
  });

  it("rate limits: /cdi/integrations 50 per minute, job_sync_status 100 per minute", async () => {
    await c.control("POST", "/fixtures", { integrations: [integration(1)] });
    for (let i = 0; i < 50; i++) expect((await c.rest("GET", "/cdi/integrations")).status).toBe(200);
    const over = await c.rest("GET", "/cdi/integrations");
    expect(over.status).toBe(429);
    expect(over.headers.get("x-ratelimit-limit")).toBe("50");
    expect(over.headers.get("retry-after")).not.toBeNull();
    const jobs = await c.rest("GET", "/cdi/integrations/int-01/job_sync_status");
    expect(jobs.headers.get("x-ratelimit-limit")).toBe("100");
  });
});

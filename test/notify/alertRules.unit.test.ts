import { readFile } from "node:fs/promises";
import path from "node:path";
import client from "prom-client";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ServiceMetrics, type ScrapeSources } from "../../src/metrics/index.js";
import "../../src/mirror/metrics.js"; // the mirror worker's metrics, on the default registry /metrics also serves
import { EVENTS } from "../../src/notify/events.js";

/**
 * docs/alerts/scim-connector.rules.yml names only metrics the service exports: the names are read
 * from the service's registries (the same ones /metrics renders), not from a list kept by hand.
 */

const RULES = path.resolve(import.meta.dirname, "../../docs/alerts/scim-connector.rules.yml");
const PROMQL_WORDS = new Set([
  "sum",
  "max",
  "min",
  "avg",
  "count",
  "increase",
  "rate",
  "time",
  "and",
  "or",
  "unless",
  "by",
  "on",
  "without",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "offset",
]);

type Rule = { alert: string; expr: string; labels?: Record<string, string>; annotations?: Record<string, string> };

/** The metric names in a PromQL expression: label matchers, ranges, groupings and strings removed first. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, "")
    .replace(/\{[^}]*\}/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\b(by|on|without|ignoring|group_left|group_right)\s*\([^)]*\)/g, "");
  return [...new Set(bare.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [])].filter((word) => !PROMQL_WORDS.has(word));
}

async function exportedMetricNames(): Promise<Set<string>> {
  // The registry is only built here; no scrape runs, so no data source is needed.
  const metrics = new ServiceMetrics({} as ScrapeSources);
  const names = new Set<string>();
  for (const registry of [metrics.registry, client.register]) {
    for (const metric of await registry.getMetricsAsJSON()) {
      names.add(metric.name);
      // At run time the type is a string ("histogram"), whatever prom-client's typings say.
      if (String(metric.type) === "histogram")
        for (const suffix of ["_bucket", "_sum", "_count"]) names.add(metric.name + suffix);
    }
  }
  return names;
}

describe("Prometheus alert rules (docs/alerts/)", () => {
  it("name only exported metrics, and cover every notification event that opens an incident", async () => {
    const doc = parse(await readFile(RULES, "utf8")) as { groups: { name: string; rules: Rule[] }[] };
    const rules = doc.groups.flatMap((g) => g.rules);
    const exported = await exportedMetricNames();
    for (const rule of rules) {
      const names = metricNames(rule.expr);
      expect([rule.alert, names.length > 0]).toEqual([rule.alert, true]);
      expect([rule.alert, names.filter((n) => !exported.has(n))]).toEqual([rule.alert, []]);
      expect(rule.labels?.severity, rule.alert).toMatch(/^(info|warning|critical)$/);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
    }
    const opening = Object.values(EVENTS).filter(
      // campaign.* are work for people (revoke at the IdP, review by the due date), not conditions a metric shows.
      (e) =>
        ![
          "approval.decided",
          "quarantine.ended",
          "idp.silent.ended",
          "platform.legacy_refused.ended",
          "notification.test",
          "campaign.revoked",
          "campaign.reminder",
          "campaign.closed",
          // one message per account made by hand: work for people (review it, revoke it), like campaign.revoked.
          "platform.unmanaged_account",
        ].includes(e),
    );
    expect(new Set(rules.map((r) => r.labels?.event).filter(Boolean))).toEqual(new Set(opening));
  });

  it("metricNames reads PromQL as intended", () => {
    expect(metricNames(`max(a_b{kind="x"}) == 0 and on () sum(increase(c_d{action="drift"}[1h])) > 0`)).toEqual([
      "a_b",
      "c_d",
    ]);
    expect(metricNames(`time() - max(e_f) > 24 * 3600`)).toEqual(["e_f"]);
  });
});

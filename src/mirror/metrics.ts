import { Counter, type Registry } from "prom-client";

/**
 * The mirror worker's counters, on the registry it is given: the service's (`ServiceMetrics`,
 * served at /metrics), or a registry of its own where nothing scrapes (tests, benches). The
 * backlog gauges (pending, parked, oldest by table and kind) are read from PostgreSQL at scrape
 * time by `ServiceMetrics`, so every replica reports them, worker or not.
 */
export function createMirrorMetrics(registry: Registry) {
  const registers = [registry];
  return {
    changesPushed: new Counter({
      name: "scim_connector_mirror_changes_pushed_total",
      help: "Mirror changes the platform accepted",
      labelNames: ["kind"],
      registers,
    }),
    changesParked: new Counter({
      name: "scim_connector_mirror_changes_parked_total",
      help: "Mirror changes parked (refused by the platform or unpushable)",
      labelNames: ["kind"],
      registers,
    }),
    requests: new Counter({
      name: "scim_connector_mirror_requests_total",
      help: "Mirror-sync platform requests by outcome",
      labelNames: ["kind", "outcome"],
      registers,
    }),
  };
}

export type MirrorMetrics = ReturnType<typeof createMirrorMetrics>;

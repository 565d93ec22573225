import client from "prom-client";

/**
 * Mirror-sync metrics on prom-client's default registry (what `/metrics` serves). Created once per
 * process; `getSingleMetric` keeps a second import (tests, hot reload) from registering twice.
 */

function counter(name: string, help: string, labelNames: string[]): client.Counter<string> {
  return (
    (client.register.getSingleMetric(name) as client.Counter<string> | undefined) ??
    new client.Counter({ name, help, labelNames })
  );
}

function gauge(name: string, help: string, labelNames: string[]): client.Gauge<string> {
  return (
    (client.register.getSingleMetric(name) as client.Gauge<string> | undefined) ??
    new client.Gauge({ name, help, labelNames })
  );
}

export const mirrorMetrics = {
  changesPushed: counter("scim_connector_mirror_changes_pushed_total", "Mirror changes the platform accepted", [
    "kind",
  ]),
  changesParked: counter(
    "scim_connector_mirror_changes_parked_total",
    "Mirror changes parked (refused by the platform or unpushable)",
    ["kind"],
  ),
  requests: counter("scim_connector_mirror_requests_total", "Mirror-sync platform requests by outcome", [
    "kind",
    "outcome",
  ]),
  pending: gauge("scim_connector_mirror_pending_changes", "Mirror changes waiting to be pushed", ["kind"]),
  parked: gauge("scim_connector_mirror_parked_changes", "Mirror changes parked", ["kind"]),
  lagSeconds: gauge("scim_connector_mirror_lag_seconds", "Age of the oldest mirror change not yet pushed", ["kind"]),
};

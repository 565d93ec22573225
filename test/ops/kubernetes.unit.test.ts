import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Job } from "kubernetes-models/batch/v1/Job";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { assertProductionTargets } from "../../src/cli/boot.js";
import { loadEnv } from "../../src/config/env.js";
import { assertMetricsTokenBeyondLoopback } from "../../src/http/metrics.js";
import { parseMapping } from "../../src/mapping/file.js";

/**
 * deploy/kubernetes (the kustomize base): every object valid against Kubernetes' own schemas
 * (kubernetes-models validates each one), every file listed in the kustomization, each role's
 * environment accepted by the service's own parser, probes on the paths each role serves, the
 * drain inside the grace period, and the mapping a valid mapping.
 */
const BASE = path.resolve(import.meta.dirname, "../../deploy/kubernetes");

type Doc = { apiVersion: string; kind: string; metadata: { name: string }; [key: string]: any };
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  "apps/v1 Deployment": Deployment,
  "batch/v1 Job": Job,
  "v1 ConfigMap": ConfigMap,
  "v1 Secret": Secret,
  "v1 Service": Service,
  "policy/v1 PodDisruptionBudget": PodDisruptionBudget,
};

const read = (file: string): Doc[] =>
  parseAllDocuments(readFileSync(path.join(BASE, file), "utf8")).map((doc) => doc.toJS() as Doc);
const kustomization = read("kustomization.yaml")[0]! as unknown as { resources: string[] };
const objects = kustomization.resources.flatMap(read);
const named = (kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in deploy/kubernetes`);
  return found;
};
const config = named("ConfigMap", "scim-connector").data as Record<string, string>;
const secret = named("Secret", "scim-connector").stringData as Record<string, string>;
const container = (workload: Doc) => workload.spec.template.spec.containers[0];
const envOf = (workload: Doc): Record<string, string> => ({
  ...config,
  ...secret,
  ...Object.fromEntries((container(workload).env ?? []).map((e: { name: string; value: string }) => [e.name, e.value])),
});

describe("the Kubernetes base (deploy/kubernetes)", () => {
  it("lists every manifest in its kustomization, and each object is valid against Kubernetes' schemas", () => {
    const files = readdirSync(BASE).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml");
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    for (const object of objects) {
      const Model = MODELS[`${object.apiVersion} ${object.kind}`];
      expect(Model, `${object.apiVersion} ${object.kind}`).toBeDefined();
      expect(() => new Model!(object).validate(), `${object.kind} ${object.metadata.name}`).not.toThrow();
    }
  });

  it("gives each role an environment the service accepts, and the migrate Job the command that migrates", () => {
    const web = named("Deployment", "scim-connector-web");
    const worker = named("Deployment", "scim-connector-worker");
    expect(loadEnv(envOf(web)).ROLES).toEqual(new Set(["web"]));
    expect(loadEnv(envOf(worker)).ROLES).toEqual(new Set(["worker", "scheduler"]));
    // The Job migrates; the Deployments only check the schema.
    expect(loadEnv(envOf(web)).MIGRATE_AT_BOOT).toBe(false);
    const job = named("Job", "scim-connector-migrate");
    expect(container(job).command.slice(-1)).toEqual(["migrate"]);
    expect(loadEnv(envOf(job)).DATABASE_URL).toBe(secret.DATABASE_URL);
  });

  it("passes the production boot checks of the image (NODE_ENV=production, HOST beyond loopback)", () => {
    for (const name of ["scim-connector-web", "scim-connector-worker"]) {
      const raw = { ...envOf(named("Deployment", name)), NODE_ENV: "production" };
      const env = loadEnv(raw);
      expect(() => assertProductionTargets(env, raw), name).not.toThrow();
      expect(() => assertMetricsTokenBeyondLoopback(env.HOST, env.METRICS_TOKEN), name).not.toThrow();
    }
  });

  it("probes each role where it answers, and drains inside the grace period", () => {
    for (const name of ["scim-connector-web", "scim-connector-worker"]) {
      const workload = named("Deployment", name);
      const c = container(workload);
      const env = loadEnv(envOf(workload));
      expect(c.ports[0].containerPort).toBe(env.PORT);
      expect(c.readinessProbe.httpGet).toMatchObject({ path: "/readyz", port: c.ports[0].name });
      expect(c.livenessProbe.httpGet).toMatchObject({ path: "/healthz", port: c.ports[0].name });
      expect(workload.spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(env.SHUTDOWN_TIMEOUT_MS);
      expect(workload.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
      expect(c.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    }
  });

  it("routes the Service and the disruption budget to the web pods only, and mounts a valid mapping", () => {
    const webLabels = named("Deployment", "scim-connector-web").spec.template.metadata.labels;
    const workerLabels = named("Deployment", "scim-connector-worker").spec.template.metadata.labels;
    const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
      Object.entries(selector).every(([k, v]) => labels[k] === v);
    const service = named("Service", "scim-connector").spec.selector;
    const pdb = named("PodDisruptionBudget", "scim-connector-web").spec.selector.matchLabels;
    expect([matches(service, webLabels), matches(service, workerLabels)]).toEqual([true, false]);
    expect([matches(pdb, webLabels), matches(pdb, workerLabels)]).toEqual([true, false]);
    const mapping = named("ConfigMap", "scim-connector-mapping").data["mapping.yaml"];
    expect(parseMapping(mapping).rules.length).toBeGreaterThan(0);
    expect(config.MAPPING_FILE).toBe("/etc/scim-connector/mapping.yaml");
  });
});

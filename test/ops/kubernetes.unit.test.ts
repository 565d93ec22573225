import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Job } from "kubernetes-models/batch/v1/Job";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { Ingress } from "kubernetes-models/networking.k8s.io/v1/Ingress";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { checkStartEnv, resolveDatabase } from "../../src/cli/boot.js";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { MappingError, parseMapping } from "../../src/mapping/file.js";
import { MappingStore } from "../../src/mapping/store.js";
import { imageCommand, imageEnv } from "./dockerImage.js";

/**
 * deploy/kubernetes (the kustomize base), rendered as `kubectl apply -k` renders it: every object
 * valid against Kubernetes' own schemas (kubernetes-models validates each one), every file listed
 * in the kustomization, every container of every pod booted through the service's own checks (the
 * image's ENV, then the ConfigMap and the Secret, filled here with strong values, then the
 * container's env; the command the container runs, the image's CMD when it names none), probes on
 * the paths each role serves, the drain inside the grace period, and the mapping a valid mapping.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const BASE = path.join(ROOT, "deploy/kubernetes");

type Doc = { apiVersion: string; kind: string; metadata: { name: string; [key: string]: any }; [key: string]: any };
type Container = { name: string; image: string; command?: string[]; args?: string[]; [key: string]: any };
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  "apps/v1 Deployment": Deployment,
  "batch/v1 Job": Job,
  "v1 ConfigMap": ConfigMap,
  "v1 Secret": Secret,
  "v1 Service": Service,
  "policy/v1 PodDisruptionBudget": PodDisruptionBudget,
};

const parseDocs = (text: string): Doc[] =>
  parseAllDocuments(text)
    .map((doc) => doc.toJS() as Doc | null)
    .filter((doc): doc is Doc => doc !== null);
const kustomization = parseDocs(readFileSync(path.join(BASE, "kustomization.yaml"), "utf8"))[0] as unknown as {
  resources: string[];
};

/**
 * `kubectl kustomize deploy/kubernetes`. Where kubectl is not installed, the kustomization's
 * resources as they are: what kustomize adds (the name label on every object, the image's tag)
 * then goes unchecked, and everything else is the same.
 */
function renderBase(): Doc[] {
  let rendered: string;
  try {
    rendered = execFileSync("kubectl", ["kustomize", BASE], { encoding: "utf8" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    rendered = kustomization.resources.map((file) => readFileSync(path.join(BASE, file), "utf8")).join("\n---\n");
  }
  return parseDocs(rendered);
}
const objects = renderBase();

const named = (kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in deploy/kubernetes`);
  return found;
};
const config = named("ConfigMap", "scim-connector").data as Record<string, string>;
const secretTemplate = named("Secret", "scim-connector").stringData as Record<string, string>;

/** The Secret as an operator fills it: every value replaced by a strong one. */
const strongSecret: Record<string, string> = Object.fromEntries(
  Object.keys(secretTemplate).map((key) => [
    key,
    key === "DATABASE_URL"
      ? `postgres://scim:${randomBytes(16).toString("hex")}@postgres:5432/scim`
      : randomBytes(32).toString("base64"),
  ]),
);

/**
 * The ConfigMap's values an operator must choose, as an overlay sets them: the base ships each as a
 * placeholder (a CHANGE-ME, or a host reserved for documentation).
 */
const chosenSettings: Record<string, string> = {
  PUBLIC_URL: "https://scim.acme-corp.net",
  TRUST_PROXY: "10.42.0.0/16",
  PLATFORM_URL: "https://rest.iad-02.acme-platform.net",
  PLATFORM_REQUEST_ORIGIN: "acme-corp",
};

const workloads = objects.filter((o) => o.kind === "Deployment" || o.kind === "Job");
const podSpec = (workload: Doc) => workload.spec.template.spec;
const container = (workload: Doc): Container => podSpec(workload).containers[0];
const containersOf = (workload: Doc): Container[] => [
  ...(podSpec(workload).initContainers ?? []),
  ...podSpec(workload).containers,
];

/** A container's environment as the kubelet builds it: the image's ENV, then envFrom in order, then env. */
function podEnv(c: Container, secrets: Record<string, string>, chosen = chosenSettings): Record<string, string> {
  const sources = (c.envFrom ?? []).map((from: { configMapRef?: { name: string }; secretRef?: { name: string } }) => {
    if (from.configMapRef?.name === "scim-connector") return { ...config, ...chosen };
    if (from.configMapRef) return named("ConfigMap", from.configMapRef.name).data as Record<string, string>;
    if (from.secretRef?.name === "scim-connector") return secrets;
    throw new Error(`${c.name}: unknown envFrom ${JSON.stringify(from)}`);
  });
  const own = (c.env ?? []).map((e: { name: string; value?: string }) => {
    if (e.value === undefined) throw new Error(`${c.name}: ${e.name} has no literal value`);
    return [e.name, e.value];
  });
  return Object.assign({}, imageEnv(), ...sources, Object.fromEntries(own));
}

/** The CLI command a container runs: `node dist/main.js` (the image's CMD) is `start`. */
function cliCommand(c: Container): string {
  const argv = [...(c.command ?? imageCommand()), ...(c.args ?? [])];
  if (argv.includes("dist/main.js")) return "start";
  const cli = argv.findIndex((arg) => /(^|\/)scim-connector(\.js)?$/.test(arg));
  if (cli < 0) throw new Error(`${c.name} runs neither the service nor its CLI: ${argv.join(" ")}`);
  return argv[cli + 1] ?? "start";
}

/** What the process checks before it touches the database: runCli parses the environment, then each command its own. */
async function bootChecks(command: string, raw: Record<string, string>): Promise<void> {
  const env = loadEnv(raw);
  if (command === "start") checkStartEnv(env, raw);
  else if (command === "migrate") expect((await resolveDatabase(env)).url).toBe(raw.DATABASE_URL);
  else throw new Error(`no boot checks known for \`${command}\``);
}

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

  for (const workload of workloads) {
    for (const c of containersOf(workload)) {
      const command = cliCommand(c);
      const roles = command === "start" ? `, ROLES=${podEnv(c, strongSecret).ROLES ?? "(every role)"}` : "";
      it(`boots ${workload.kind} ${workload.metadata.name}'s ${c.name} (\`${command}\`${roles}) with the Secret filled`, async () => {
        await expect(bootChecks(command, podEnv(c, strongSecret))).resolves.toBeUndefined();
      });
    }
  }

  it("refuses to boot any pod on the Secret template as shipped, naming each CHANGE-ME placeholder", async () => {
    const placeholders = Object.keys(secretTemplate).filter((key) => /CHANGE-ME/.test(secretTemplate[key]!));
    expect(placeholders.sort()).toEqual(Object.keys(secretTemplate).sort());
    for (const workload of workloads) {
      for (const c of containersOf(workload)) {
        const refused = await bootChecks(cliCommand(c), podEnv(c, secretTemplate)).then(
          () => [],
          (error: ConfigError) => error.problems,
        );
        const refusedKeys = placeholders.filter((key) => refused.some((problem) => problem.startsWith(`${key}: `)));
        expect(refusedKeys, `${workload.metadata.name} ${c.name}: ${refused.join("\n")}`).toEqual(placeholders);
        for (const problem of refused) expect(problem).not.toContain("CHANGE-ME-generate");
      }
    }
  });

  it("refuses to start any connector on the ConfigMap as shipped, naming each value only the operator can choose", async () => {
    const chosen = Object.keys(chosenSettings).sort();
    for (const workload of workloads) {
      for (const c of containersOf(workload)) {
        if (cliCommand(c) !== "start") continue;
        const refused = await bootChecks("start", podEnv(c, strongSecret, {})).then(
          () => [],
          (error: ConfigError) => error.problems,
        );
        const named = chosen.filter((key) => refused.some((problem) => problem.startsWith(`${key}: `)));
        expect(named, `${workload.metadata.name} ${c.name}: ${refused.join("\n")}`).toEqual(chosen);
      }
    }
  });

  it("ships a mapping that production refuses wherever it lives, naming its placeholder line", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "scim-connector-k8s-mapping-"));
    const file = path.join(dir, "mapping.yaml");
    writeFileSync(file, named("ConfigMap", "scim-connector-mapping").data["mapping.yaml"]);
    const refused = await MappingStore.load(file, { refusePlaceholder: true }).then(
      () => "loaded",
      (error: MappingError) => error.message,
    );
    expect(refused).toMatch(
      /mapping\.yaml:3:1: this mapping is a template's placeholder .*refused with NODE_ENV=production/,
    );
    await expect(MappingStore.load(file)).resolves.toBeInstanceOf(MappingStore);
  });

  it("migrates in each pod before its role starts, with the pod's image, and has no Job that a new image could not re-apply", () => {
    // A Job's pod template is immutable: `kubectl apply -k` with a new image fails on it, and
    // nothing orders a Job before the Deployments' new pods.
    expect(objects.filter((o) => o.kind === "Job").map((o) => o.metadata.name)).toEqual([]);
    for (const name of ["scim-connector-web", "scim-connector-worker"]) {
      const workload = named("Deployment", name);
      const [migrate, ...others] = podSpec(workload).initContainers ?? [];
      expect(migrate && cliCommand(migrate), name).toBe("migrate");
      expect(others, name).toEqual([]);
      const c = container(workload);
      expect(migrate.image, name).toBe(c.image);
      expect(podEnv(migrate, strongSecret).DATABASE_URL, name).toBe(podEnv(c, strongSecret).DATABASE_URL);
      expect(migrate.securityContext, name).toEqual(c.securityContext);
    }
  });

  it("labels every pod it runs with the app's name", () => {
    for (const workload of workloads) {
      expect(workload.spec.template.metadata.labels, workload.metadata.name).toMatchObject({
        "app.kubernetes.io/name": "scim-connector",
      });
    }
  });

  it("runs each role the Deployments name, and only checks the schema at boot", () => {
    const web = podEnv(container(named("Deployment", "scim-connector-web")), strongSecret);
    const worker = podEnv(container(named("Deployment", "scim-connector-worker")), strongSecret);
    expect(loadEnv(web).ROLES).toEqual(new Set(["web"]));
    expect(loadEnv(worker).ROLES).toEqual(new Set(["worker", "scheduler"]));
    expect([loadEnv(web).MIGRATE_AT_BOOT, loadEnv(worker).MIGRATE_AT_BOOT]).toEqual([false, false]);
  });

  it("probes each role where it answers, and drains inside the grace period", () => {
    for (const name of ["scim-connector-web", "scim-connector-worker"]) {
      const workload = named("Deployment", name);
      const c = container(workload);
      const env = loadEnv(podEnv(c, strongSecret));
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

/**
 * docs/go-live.md's overlay, as written, with the `<…>` values an operator fills in: rendered by
 * `kubectl kustomize` beside a copy of the base (where kubectl is not installed, the three things
 * it uses are applied here: the ConfigMap patches by name, the Secret's deletion, the image).
 */
describe("docs/go-live.md's Kubernetes overlay", () => {
  const FILLED: Record<string, string> = {
    "<registry>": "registry.acme-corp.net",
    "<version>": "0.2.0",
    "<the host your IdP reaches>": "scim.acme-corp.net",
    "<your platform instance's REST endpoint>": "rest.iad-02.acme-platform.net",
    "<the origin your platform account expects>": "acme-corp",
    "<your ingress controller's pod subnet>": "10.42.0.0/16",
    "<your IdP's admin group>": "Platform Admins",
  };
  const guide = readFileSync(path.join(ROOT, "docs/go-live.md"), "utf8");
  const block = (file: string): string => {
    const found = new RegExp(
      `<!-- k8s-overlay ${file.replace(".", "\\.")} -->\\n+( *)\`\`\`yaml\\n([\\s\\S]*?)\\n *\`\`\``,
    ).exec(guide);
    if (!found) throw new Error(`docs/go-live.md has no k8s-overlay ${file} block`);
    const indent = found[1]!.length;
    const text = found[2]!
      .split("\n")
      .map((line) => line.slice(indent))
      .join("\n");
    return Object.entries(FILLED).reduce((t, [from, to]) => t.replaceAll(from, to), text);
  };

  function render(): Doc[] {
    const dir = mkdtempSync(path.join(os.tmpdir(), "scim-connector-overlay-"));
    cpSync(BASE, path.join(dir, "kubernetes"), { recursive: true });
    const overlay = path.join(dir, "overlays", "production");
    mkdirSync(overlay, { recursive: true });
    const files = ["kustomization.yaml", "settings.yaml", "mapping.yaml"].map((file) => [file, block(file)] as const);
    for (const [file, text] of files) {
      expect(text, `${file}: every <…> filled`).not.toMatch(/<[^>]*>/);
      writeFileSync(path.join(overlay, file), text);
    }
    try {
      return parseDocs(execFileSync("kubectl", ["kustomize", overlay], { encoding: "utf8" }));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    const kustomization = parseDocs(files[0][1])[0] as unknown as {
      namespace: string;
      images: { name: string; newName: string; newTag: string }[];
      patches: ({ path: string } | { patch: string })[];
    };
    let rendered: Doc[] = structuredClone(objects);
    for (const entry of kustomization.patches) {
      const patch = parseDocs("path" in entry ? readFileSync(path.join(overlay, entry.path), "utf8") : entry.patch)[0]!;
      const target = (o: Doc) => o.kind === patch.kind && o.metadata.name === patch.metadata.name;
      if (patch.$patch === "delete") rendered = rendered.filter((o) => !target(o));
      else for (const o of rendered.filter(target)) o.data = { ...o.data, ...patch.data };
    }
    const [image] = kustomization.images;
    for (const o of rendered) {
      o.metadata.namespace = kustomization.namespace;
      for (const c of o.spec?.template?.spec ? containersOf(o) : [])
        if (c.image === image!.name) c.image = `${image!.newName}:${image!.newTag}`;
    }
    return rendered;
  }
  const rendered = render();
  const renderedNamed = (kind: string, name: string) =>
    rendered.find((o) => o.kind === kind && o.metadata.name === name)!;

  it("runs the pushed image in the overlay's namespace, without the base's Secret template", () => {
    expect(rendered.filter((o) => o.kind === "Secret")).toEqual([]);
    for (const o of rendered) expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBe("scim-connector");
    for (const workload of rendered.filter((o) => o.kind === "Deployment"))
      for (const c of containersOf(workload)) expect(c.image).toBe("registry.acme-corp.net/scim-connector:0.2.0");
  });

  it("boots every connector with the Secret of step 2 and the overlay's settings and mapping", async () => {
    const settings = renderedNamed("ConfigMap", "scim-connector").data as Record<string, string>;
    for (const workload of rendered.filter((o) => o.kind === "Deployment")) {
      for (const c of containersOf(workload)) {
        const own = Object.fromEntries((c.env ?? []).map((e: { name: string; value: string }) => [e.name, e.value]));
        const env = { ...imageEnv(), ...settings, ...strongSecret, ...own };
        await expect(bootChecks(cliCommand(c), env), `${workload.metadata.name} ${c.name}`).resolves.toBeUndefined();
      }
    }
    const dir = mkdtempSync(path.join(os.tmpdir(), "scim-connector-overlay-mapping-"));
    const file = path.join(dir, "mapping.yaml");
    writeFileSync(file, renderedNamed("ConfigMap", "scim-connector-mapping").data["mapping.yaml"]);
    await expect(MappingStore.load(file, { refusePlaceholder: true })).resolves.toBeInstanceOf(MappingStore);
  });
});

describe("deploy/kubernetes/examples", () => {
  const examples = path.join(BASE, "examples");
  const read = (file: string) => parseDocs(readFileSync(path.join(examples, file), "utf8"));

  it("exposes only /scim/v2 and /oauth through the Ingress, to the web pods' Service", () => {
    const [ingress] = read("ingress.yaml");
    expect(() => new Ingress(ingress).validate()).not.toThrow();
    const paths = ingress!.spec.rules.flatMap((r: { http: { paths: unknown[] } }) => r.http.paths);
    expect(paths.map((p: { path: string; pathType: string }) => `${p.pathType} ${p.path}`).sort()).toEqual([
      "Prefix /oauth",
      "Prefix /scim/v2",
    ]);
    for (const p of paths) expect(p.backend.service).toEqual({ name: "scim-connector", port: { name: "http" } });
  });

  it("lets only the ingress controller reach the web pods, and Prometheus every pod", () => {
    const policies = read("networkpolicy.yaml");
    for (const policy of policies) expect(() => new NetworkPolicy(policy).validate()).not.toThrow();
    const components = policies.map((p) => p.spec.podSelector.matchLabels["app.kubernetes.io/component"]).sort();
    expect(components).toEqual(["web", "worker"]);
  });

  it("scrapes every web and worker pod with METRICS_TOKEN from the Secret, and no pod asks for an unauthenticated scrape", () => {
    const [monitor] = read("servicemonitor.yaml");
    const metrics = named("Service", "scim-connector-metrics");
    const labels = { ...metrics.metadata.labels, "app.kubernetes.io/name": "scim-connector" };
    for (const [key, value] of Object.entries(monitor!.spec.selector.matchLabels)) expect(labels[key]).toBe(value);
    const [endpoint] = monitor!.spec.endpoints;
    expect(endpoint).toMatchObject({ port: "http", path: "/metrics" });
    expect(endpoint.authorization.credentials).toEqual({ name: "scim-connector", key: "METRICS_TOKEN" });
    expect(Object.keys(secretTemplate)).toContain("METRICS_TOKEN");
    for (const name of ["scim-connector-web", "scim-connector-worker"]) {
      const pod = named("Deployment", name).spec.template;
      const selected = Object.entries(metrics.spec.selector).every(([k, v]) => pod.metadata.labels[k] === v);
      expect(selected, name).toBe(true);
      expect(pod.metadata.annotations?.["prometheus.io/scrape"], name).toBeUndefined();
    }
  });
});

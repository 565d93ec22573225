// `npm run lint:deps`: dependency-cruiser with .dependency-cruiser.cjs, plus the one check its rules cannot
// express: no circle among the top-level folders of src/ (src/admin, src/jobs, …, and the files at
// src/'s root). dependency-cruiser's folder scope sees every folder apart (src/admin/campaigns is
// not src/admin), so src/jobs → src/admin/campaigns with src/admin → src/jobs passed its
// no-folder-cycle rule. One cruise feeds both: the rules' report, then the top-level graph of value
// imports (type-only imports vanish at run time and are not in the graph), whose strongly connected
// components must each be a single folder. Exit 1 on any violation, naming one import per link.
import { cruise, format } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";

const options = await extractDepcruiseOptions("./.dependency-cruiser.cjs");
const cruised = await cruise(["src"], { ...options, outputType: "json" }, options.enhancedResolveOptions ?? {}, {
  tsConfig: extractTSConfig("tsconfig.json"),
});
const result = JSON.parse(String(cruised.output));
const rules = await format(result, { outputType: "err" });
process.stdout.write(rules.output);

/** src/admin/campaigns/index.ts → src/admin; src/service.ts stays itself. */
const topLevel = (path) => /^src\/[^/]+\//.exec(path)?.[0].slice(0, -1) ?? path;

/** from folder → to folder → one example import (file → file). */
const edges = new Map();
for (const module of result.modules) {
  for (const dependency of module.dependencies) {
    const from = topLevel(module.source);
    const to = topLevel(dependency.resolved);
    if (from === to || !to.startsWith("src/") || !from.startsWith("src/")) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, `${module.source} → ${dependency.resolved}`);
  }
}

const cycles = stronglyConnected([...edges.keys()], (node) => [...(edges.get(node)?.keys() ?? [])]).filter(
  (component) => component.length > 1,
);
for (const component of cycles) {
  const members = new Set(component);
  console.log(`\n  error top-level-folder-cycle: ${[...component].sort().join(" ⇄ ")} import each other:`);
  for (const from of [...component].sort()) {
    for (const [to, example] of edges.get(from) ?? []) if (members.has(to)) console.log(`    ${example}`);
  }
}
if (cycles.length > 0) console.log(`\n✘ ${cycles.length} circle(s) among the top-level folders of src/\n`);
else console.log("✔ no circle among the top-level folders of src/\n");
process.exitCode = rules.exitCode !== 0 || cycles.length > 0 ? 1 : 0;

/** Tarjan's algorithm: the strongly connected components of the graph. */
function stronglyConnected(nodes, next) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  const visit = (node) => {
    index.set(node, index.size);
    low.set(node, index.get(node));
    stack.push(node);
    onStack.add(node);
    for (const to of next(node)) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node), index.get(to)));
    }
    if (low.get(node) === index.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      components.push(component);
    }
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return components;
}

import type { DashboardUser } from "../../src/emulator/dashboard/users.js";
import { migratedPermissions } from "../../src/emulator/dashboard/permissionModel.js";

/**
 * bench/granular-switch's world, kept apart from the connector's code: which groups grant what
 * (the legacy mapping it writes), who is in which group, and so what every account must hold on
 * the platform at each step, computed from that model and the platform's own translation of
 * legacy strings (the emulator's, as it migrates a company), never from the connector's mapping
 * code. The checker compares it with the emulator's accounts, workspace by workspace and team by
 * team, as sets.
 */

export type GranularWorld = { users: number; groups: number };

/** Group k grants basic_access in Workspace k%4, plus send_campaigns_canvases for even k, plus a team for every third. */
export function legacyMapping(world: GranularWorld): string {
  const lines = ["department: { default: engineering }", "rules:"];
  for (let k = 0; k < world.groups; k++) {
    lines.push(
      `  - description: Group ${k}`,
      `    group: Group ${k}`,
      "    workspaces:",
      `      - name: Workspace ${k % 4}`,
      `        permissions: [${groupPermissions(k).join(", ")}]`,
      ...(k % 3 === 0
        ? ["        teams:", `          - name: Team ${k}`, "            permissions: [basic_access]"]
        : []),
    );
  }
  return `${lines.join("\n")}\n`;
}

const groupPermissions = (k: number) => (k % 2 === 0 ? ["basic_access", "send_campaigns_canvases"] : ["basic_access"]);

/** User i is in group i % groups, and every 7th user also in group (i + 1) % groups. */
export const groupsOf = (world: GranularWorld, i: number) =>
  i % 7 === 0 ? [i % world.groups, (i + 1) % world.groups] : [i % world.groups];

export const userNameOf = (i: number) => `u${i}@example.com`;

/** Where the bench stands: legacy strings, translated to granular, and the one-rule change on top. */
export type Step = { model: "legacy" | "granular"; extra?: { group: number; permission: string } };

/** Workspace (and "workspace / team") → the permissions one user must hold there at `step`. */
function expectedAccess(world: GranularWorld, i: number, step: Step): Map<string, Set<string>> {
  const legacy = new Map<string, Set<string>>();
  const add = (where: string, permissions: string[]) =>
    permissions.forEach((p) => legacy.set(where, (legacy.get(where) ?? new Set()).add(p)));
  for (const k of groupsOf(world, i)) {
    add(`Workspace ${k % 4}`, groupPermissions(k));
    if (k % 3 === 0) add(`Workspace ${k % 4} / Team ${k}`, ["basic_access"]);
  }
  if (step.model === "legacy") return legacy;
  const granular = new Map([...legacy].map(([where, p]) => [where, new Set(migratedPermissions([...p]).permissions)]));
  const extra = step.extra;
  if (extra && groupsOf(world, i).includes(extra.group))
    granular.get(`Workspace ${extra.group % 4}`)!.add(extra.permission);
  return granular;
}

function heldAccess(account: DashboardUser): Map<string, Set<string>> {
  const held = new Map<string, Set<string>>();
  for (const ws of account.permissions.appGroup) {
    held.set(ws.appGroupName, new Set(ws.appGroupPermissions));
    for (const team of ws.team ?? []) held.set(`${ws.appGroupName} / ${team.teamName}`, new Set(team.teamPermissions));
  }
  return held;
}

/** How `held` differs from `wanted`, in words ("" when alike): what is missing and what is extra, place by place. */
function difference(held: Map<string, Set<string>>, wanted: Map<string, Set<string>>): string {
  const words: string[] = [];
  for (const where of new Set([...held.keys(), ...wanted.keys()])) {
    const h = held.get(where) ?? new Set<string>();
    const w = wanted.get(where) ?? new Set<string>();
    const missing = [...w].filter((p) => !h.has(p));
    const extra = [...h].filter((p) => !w.has(p));
    if (missing.length) words.push(`${where} lacks ${missing.join(", ")}`);
    if (extra.length) words.push(`${where} has more: ${extra.join(", ")}`);
  }
  return words.join("; ");
}

/** Every account the model wants, holding what it wants, and none other: the first few differences, in words. */
export function accountDifferences(world: GranularWorld, accounts: DashboardUser[], step: Step): string[] {
  const byName = new Map(accounts.map((a) => [a.userName.toLowerCase(), a]));
  const differences: string[] = [];
  for (let i = 0; i < world.users; i++) {
    const account = byName.get(userNameOf(i));
    byName.delete(userNameOf(i));
    const unlike = account && difference(heldAccess(account), expectedAccess(world, i, step));
    if (!account) differences.push(`${userNameOf(i)}: no account`);
    else if (unlike) differences.push(`${userNameOf(i)}: ${unlike}`);
  }
  for (const name of byName.keys()) differences.push(`${name}: an account the mapping does not want`);
  return differences;
}

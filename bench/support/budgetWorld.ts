/**
 * The IdP as bench:budget models it: 60 groups, a fixed mapping, users and their churn, and the
 * bench's own oracle of what the platform should hold (written by hand for this one mapping, so a
 * bug in the connector's mapping cannot move the product and its yardstick together).
 */
import { isDeepStrictEqual } from "node:util";
import type { DesiredDashboardUser, DesiredWorkspace } from "../../src/mapping/types.js";

export type Group = { index: number; id: string; displayName: string; externalId: string | null };
/** What the IdP holds for a user, as far as the mapping can see. */
export type UserState = { active: boolean; givenName: string; familyName: string; groups: Set<number> };
export type User = { index: number; id: string; userName: string } & UserState;

const DEPARTMENTS = ["agency", "bi", "c_suite", "finance", "marketing", "pm"];
export const PRIMARY = Array.from({ length: 50 }, (_, k) => k);
export const ANALYSTS = [50, 51, 52, 53, 54];
export const SOCIAL = [55, 56, 57, 58, 59];

/** 0-29 matched by externalId (renames are free), 30-49 by name, 50-54 by pattern, 55-59 unmapped. */
export function groupDefinition(k: number): Omit<Group, "id"> {
  if (k < 30) return { index: k, displayName: `Team ${k}`, externalId: `00g-team-${k}` };
  if (k < 50) return { index: k, displayName: `Dept ${k}`, externalId: null };
  if (k < 55) return { index: k, displayName: `Analysts-${k}`, externalId: null };
  return { index: k, displayName: `Social ${k}`, externalId: null };
}

export function mappingYaml(): string {
  const lines = [
    "department:",
    "  default: engineering",
    "  fromAttribute: false",
    `  allowed: [engineering, ${DEPARTMENTS.join(", ")}]`,
    "rules:",
  ];
  for (let k = 0; k < 30; k++) {
    lines.push(
      `  - groupExternalId: 00g-team-${k}`,
      "    workspaces:",
      `      - name: Workspace ${k % 5}`,
      `        permissions: [basic_access${k % 3 === 0 ? ", send_campaigns_canvases" : ""}]`,
      "        teams:",
      `          - name: Team ${k}`,
      "            permissions: [basic_access]",
    );
  }
  for (let k = 30; k < 50; k++) {
    lines.push(
      `  - group: Dept ${k}`,
      `    department: ${DEPARTMENTS[k % DEPARTMENTS.length]}`,
      "    workspaces:",
      `      - name: Workspace ${k % 5}`,
      `        permissions: [basic_access${k % 2 ? ", export_user_data" : ""}]`,
    );
  }
  lines.push(
    '  - groupPattern: "^Analysts-"',
    "    workspaces:",
    "      - name: Analytics",
    "        permissions: [export_user_data]",
  );
  return `${lines.join("\n")}\n`;
}

/**
 * The oracle: the mapping above, read by hand. Team groups grant basic_access (plus
 * send_campaigns_canvases for every third) in Workspace k%5 and basic_access on Team k; Dept
 * groups grant basic_access (plus export_user_data when odd) in Workspace k%5 and the first one's
 * department; Analysts groups grant export_user_data in Analytics; Social groups nothing.
 */
export function oracleDesired(userName: string, u: UserState): DesiredDashboardUser | null {
  if (!u.active) return null;
  const mapped = [...u.groups].filter((k) => k < 55).sort((a, b) => a - b);
  if (!mapped.length) return null;
  const workspaces = new Map<string, { permissions: Set<string>; teams: Map<string, Set<string>> }>();
  const workspace = (name: string) =>
    workspaces.get(name) ?? workspaces.set(name, { permissions: new Set(), teams: new Map() }).get(name)!;
  let department = "engineering";
  for (const k of mapped) {
    if (k < 30) {
      const ws = workspace(`Workspace ${k % 5}`);
      ws.permissions.add("basic_access");
      if (k % 3 === 0) ws.permissions.add("send_campaigns_canvases");
      ws.teams.set(`Team ${k}`, new Set(["basic_access"]));
    } else if (k < 50) {
      const ws = workspace(`Workspace ${k % 5}`);
      ws.permissions.add("basic_access");
      if (k % 2) ws.permissions.add("export_user_data");
      if (department === "engineering") department = DEPARTMENTS[k % DEPARTMENTS.length]!;
    } else {
      workspace("Analytics").permissions.add("export_user_data");
    }
  }
  const sorted = (s: Set<string>) => [...s].sort();
  const byName = <T>(entries: [string, T][]) => entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const out: DesiredWorkspace[] = byName([...workspaces.entries()]).map(([appGroupName, ws]) => ({
    appGroupName,
    appGroupPermissions: sorted(ws.permissions),
    appGroupPermissionSets: [],
    team: byName([...ws.teams.entries()]).map(([teamName, perms]) => ({ teamName, teamPermissions: sorted(perms) })),
  }));
  return {
    userName,
    givenName: u.givenName,
    familyName: u.familyName,
    department,
    companyPermissions: [],
    workspaces: out,
  };
}

/** Every single grant of a desired user, as `company:<p>`, `<workspace>:<p>` and `<workspace>/<team>:<p>` (none for no account). */
export function grantsOf(d: DesiredDashboardUser | null): Set<string> {
  if (!d) return new Set();
  return new Set([
    ...d.companyPermissions.map((p) => `company:${p}`),
    ...d.workspaces.flatMap((w) => [
      ...w.appGroupPermissions.map((p) => `${w.appGroupName}:${p}`),
      ...w.team.flatMap((t) => t.teamPermissions.map((p) => `${w.appGroupName}/${t.teamName}:${p}`)),
    ]),
  ]);
}

/** Whether going from `before` to `after` takes any access away (a deprovision, a lost permission, workspace or team). */
export function takesAccessAway(before: DesiredDashboardUser | null, after: DesiredDashboardUser | null): boolean {
  if (!before) return false;
  if (!after) return true;
  const now = grantsOf(after);
  return [...grantsOf(before)].some((g) => !now.has(g));
}

export const sameDesired = (a: DesiredDashboardUser | null, b: DesiredDashboardUser | null) => isDeepStrictEqual(a, b);

/** mulberry32: a small seeded generator, so every run replays the same week. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One IdP request as the bench sends it. `effect` applies it to the model of what the IdP has
 * sent so far (the oracle's input) when it is sent; `touches` are the users whose IdP state it
 * changes (the users the connector must look at again).
 */
export type IdpRequest = {
  /** Requests with one key keep their order (one user, one group). */
  key: string;
  touches: string[];
  /** The one-call-per-touched-user cost of a forwarder that applies every write. */
  naive: number;
  effect: () => void;
  send: () => Promise<unknown>;
};

/**
 * A person's action in the IdP (an admin moving someone, a joiner), as the requests it makes the
 * IdP send, in order; `membership` marks a group member change (Entra sends those after the user
 * writes of its cycle).
 */
export type IdpEvent = { requests: PacedRequest[] };
/** `group`: the group a membership change is about (Entra sends them group by group). */
export type PacedRequest = IdpRequest & { membership: boolean; group?: number };

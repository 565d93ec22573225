/**
 * The unmanaged accounts, one use case for every surface (`scim-connector platform unmanaged`,
 * `GET /admin/api/platform/unmanaged`, the access review): accounts made by hand on the platform,
 * found in its record (findings.ts) and confirmed by one lookup (discovery.ts). An email an IdP user
 * has is never listed: once the IdP provisions it, the reconciler adopts the account (on 409) and it
 * leaves the list, at read time, whatever its row says.
 */
import type { Queryable } from "../db/database.js";
import {
  listUnmanagedAccounts,
  type UnmanagedAccount,
  type UnmanagedPermissions,
  type UnmanagedState,
} from "../db/platform/unmanagedAccountRepository.js";

/** One account as the surfaces present it. */
export type UnmanagedAccountView = {
  userName: string;
  state: UnmanagedState;
  /** What the lookup found it holding (null until confirmed). */
  permissions: UnmanagedPermissions | null;
  /** The same, in words ("company: manage_team"; "EU Production: basic_access"). */
  holds: string[];
  platformId: string | null;
  firstSeen: string;
  addedBy: string | null;
  lastEventAt: string;
  confirmedAt: string | null;
  /**
   * A campaign's revoke (src/review/campaigns/origins.ts): strip or delete, by whom, when, and when
   * the connector carried it out (`doneAt` null: queued, or a delete waiting for an admin's approval).
   * A stripped account stays listed, holding nothing; a deleted one leaves the list.
   */
  revoked: {
    removal: "strip" | "delete";
    by: string;
    at: string;
    campaignId: string | null;
    doneAt: string | null;
  } | null;
};

/** Listed by default: the accounts believed to exist (seen, or confirmed). `all` adds those found absent or removed. */
const LISTED: readonly UnmanagedState[] = ["candidate", "confirmed"];
const ALL: readonly UnmanagedState[] = ["candidate", "confirmed", "absent", "removed"];

export async function listUnmanaged(db: Queryable, options: { all?: boolean } = {}): Promise<UnmanagedAccountView[]> {
  return (await listUnmanagedAccounts(db, options.all ? ALL : LISTED)).map(presentUnmanaged);
}

/** The confirmed accounts alone: the access review's and the evidence pack's "not managed by the IdP". */
export async function listConfirmedUnmanaged(db: Queryable): Promise<UnmanagedAccountView[]> {
  return (await listUnmanagedAccounts(db, ["confirmed"])).map(presentUnmanaged);
}

function presentUnmanaged(a: UnmanagedAccount): UnmanagedAccountView {
  return {
    userName: a.userName,
    state: a.state,
    permissions: a.permissions,
    holds: holdsInWords(a.permissions),
    platformId: a.platformId,
    firstSeen: a.firstSeen.toISOString(),
    addedBy: a.addedBy,
    lastEventAt: a.lastEventAt.toISOString(),
    confirmedAt: a.confirmedAt?.toISOString() ?? null,
    revoked: a.removal
      ? {
          removal: a.removal.removal,
          by: a.removal.by,
          at: a.removal.at.toISOString(),
          campaignId: a.removal.campaignId,
          doneAt: a.removal.doneAt?.toISOString() ?? null,
        }
      : null,
  };
}

/** What an account holds, one line per level: company permissions and roles, then each workspace and team. */
export function holdsInWords(p: UnmanagedPermissions | null): string[] {
  if (!p) return [];
  const list = (values: readonly string[]) => values.join(", ");
  const lines: string[] = [];
  const company = [...p.companyPermissions, ...(p.roles ?? []).map((r) => `role ${r}`)];
  if (company.length) lines.push(`company: ${list(company)}`);
  for (const w of p.workspaces) {
    const granted = [...w.appGroupPermissions, ...w.appGroupPermissionSets.map((s) => `set ${s}`)];
    lines.push(`${w.appGroupName}: ${granted.length ? list(granted) : "(no permissions)"}`);
    for (const t of w.team) lines.push(`${w.appGroupName} / ${t.teamName}: ${list(t.teamPermissions) || "(none)"}`);
  }
  return lines;
}

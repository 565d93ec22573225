import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { endDenies, type AccessDeny } from "../db/campaigns/denyRepository.js";
import { writeLogEntry } from "../db/reconcile/logRepository.js";
import type { DesiredAccess } from "../mapping/desiredAccess.js";
import { bundleOrigin, bundleWords, explainGrants } from "../mapping/reasons.js";
import type { DesiredState, DesiredStateSource } from "./ports.js";

/**
 * The desired dashboard user of one IdP user, as DesiredAccess gives it (src/mapping/desiredAccess.ts:
 * the mapping in force, which may not be this replica's file, less the grants an access campaign
 * revoked), and (on demand, for the log entry that applies it) the rules and groups behind each grant.
 *
 * With `endDenies` (the reconciler's own source), a deny whose grant no rule gives any more ends
 * here, logged: the IdP admin removed the membership at the source, which is what the revoke asked.
 * Read-only callers (the `plan` command) leave it for the reconciler.
 */
export class MappedDesiredState implements DesiredStateSource {
  constructor(
    private readonly db: Database,
    private readonly access: DesiredAccess,
    private readonly endDenies?: { clock: Clock },
  ) {}

  async equivalents() {
    return (await this.access.inForce(this.db)).equivalents;
  }

  async load(userId: string): Promise<DesiredState> {
    const access = await this.access.ofUser(this.db, userId);
    if (!access) return { exists: false, userName: null, desired: null };
    const { user, mapping, desired, notGranted } = access;
    // Only an active user's rules say whether the IdP still grants it: with the user deactivated
    // nothing is granted, and ending the deny then would bring the revoked grant back on re-activation.
    if (user.active && notGranted.length && this.endDenies) await this.endUngranted(notGranted, this.endDenies.clock);
    return {
      exists: true,
      userName: user.userName,
      desired,
      active: user.active,
      equivalents: mapping.equivalents,
      ...(desired
        ? { reasons: () => explainGrants(desired, user.groups, mapping, user.department, user.assigned) }
        : {}),
    };
  }

  private async endUngranted(denies: AccessDeny[], clock: Clock): Promise<void> {
    const at = clock.now();
    await this.db.transaction(async (tx) => {
      for (const deny of await endDenies(
        tx,
        denies.map((d) => d.id),
        { at, reason: "idp-no-longer-grants", by: null },
      )) {
        await writeLogEntry(tx, {
          at,
          userId: deny.userId,
          userName: deny.userName,
          action: "deny-ended",
          outcome: "succeeded",
          trigger: { kind: "campaign", campaignId: deny.campaignId, denyId: deny.id },
          note: `deny ended: the IdP no longer grants ${grantWords(deny)} (revoked in campaign "${deny.campaignName}" by ${deny.decidedBy} on ${deny.decidedAt.toISOString()})`,
        });
      }
    });
  }
}

/**
 * A grant in words: "admin (company)", "export_user_data in EU Production", "basic_access in team
 * Lifecycle of EU Production", "role Marketer"; a granular bundle by its rule and first strings
 * ("45 permissions in EU Production from rule 'EU marketers': view_campaigns, …"); one string of a
 * revoked bundle with the bundle it was revoked in.
 */
export function grantWords(g: {
  scope: string;
  workspace: string | null;
  team: string | null;
  permission: string;
  bundle?: readonly string[] | null | undefined;
  partOf?: string | null | undefined;
}): string {
  if (g.bundle) return bundleWords({ ...g, bundle: g.bundle });
  const part = g.partOf ? ` (revoked with the permissions ${bundleOrigin(g.partOf)})` : "";
  if (g.scope === "company") return `${g.permission} (company)`;
  if (g.scope === "role") return `role ${g.permission}`;
  if (g.scope === "team") return `${g.permission} in team ${g.team} of ${g.workspace}${part}`;
  if (g.scope === "permissionSet") return `permission set ${g.permission} in ${g.workspace}`;
  if (g.scope === "department") return `department ${g.permission}`;
  if (g.scope === "account") return "the whole account (made by hand in the dashboard)";
  return `${g.permission} in ${g.workspace}${part}`;
}

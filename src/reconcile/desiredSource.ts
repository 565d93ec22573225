import type { Database } from "../db/database.js";
import { getUserForReconcile } from "../db/idpUserRepository.js";
import { desiredDashboardUser } from "../mapping/desired.js";
import { explainGrants } from "../mapping/reasons.js";
import type { MappingStore } from "../mapping/store.js";
import type { DesiredState, DesiredStateSource } from "./ports.js";

/**
 * The desired dashboard user of one IdP user: their stored SCIM state run through the mapping in
 * force, and (on demand, for the log entry that applies it) the rules and groups behind each grant.
 */
export class MappedDesiredState implements DesiredStateSource {
  constructor(
    private readonly db: Database,
    private readonly mappings: MappingStore,
  ) {}

  async load(userId: string): Promise<DesiredState> {
    const user = await getUserForReconcile(this.db, userId);
    if (!user) return { exists: false, userName: null, desired: null };
    const mapping = this.mappings.current();
    const desired = desiredDashboardUser(user, user.groups, mapping);
    return {
      exists: true,
      userName: user.userName,
      desired,
      active: user.active,
      ...(desired ? { reasons: () => explainGrants(desired, user.groups, mapping, user.department) } : {}),
    };
  }
}

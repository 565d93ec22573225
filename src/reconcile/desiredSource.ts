import type { Database } from "../db/database.js";
import { getUserForReconcile } from "../db/idpUserRepository.js";
import { desiredDashboardUser } from "../mapping/desired.js";
import type { MappingStore } from "../mapping/store.js";
import type { DesiredState, DesiredStateSource } from "./ports.js";

/** The desired dashboard user of one IdP user: their stored SCIM state run through the mapping in force. */
export class MappedDesiredState implements DesiredStateSource {
  constructor(
    private readonly db: Database,
    private readonly mappings: MappingStore,
  ) {}

  async load(userId: string): Promise<DesiredState> {
    const user = await getUserForReconcile(this.db, userId);
    if (!user) return { exists: false, userName: null, desired: null };
    return {
      exists: true,
      userName: user.userName,
      desired: desiredDashboardUser(user, user.groups, this.mappings.current()),
    };
  }
}

import type { DashboardUserStore } from "./users.js";
import { badRequest } from "../http.js";
import { migratedPermissions, type PermissionModel } from "./permissionModel.js";
import { oneOf } from "../validation.js";

/**
 * `POST /_emulator/permissions`: the platform's migration of a company from legacy to granular
 * permissions, and later the day it stops accepting legacy SCIM strings. A company never goes back.
 */

/** Pure: `{"model": "legacy" | "granular", "legacy": "accepted" | "refused"}`; `legacy` defaults to accepted. */
export function parseModelChange(body: Record<string, unknown>): PermissionModel {
  const model = oneOf(body.model, "model", ["legacy", "granular"] as const);
  const legacy = oneOf(body.legacy ?? "accepted", "legacy", ["accepted", "refused"] as const);
  if (model === "legacy" && legacy === "refused") throw badRequest("a legacy company cannot refuse legacy permissions");
  return { model, legacy };
}

export type ModelChange = PermissionModel & { usersMigrated: number; droppedPermissions: Record<string, number> };

/**
 * From legacy to granular, every user's legacy workspace and team strings are replaced by their
 * granular equivalents (nobody's access changes); between granular states only whether legacy
 * strings are accepted changes. Granular to legacy is a 400.
 */
export function changePermissionModel(users: DashboardUserStore, requested: PermissionModel): ModelChange {
  const current = users.model;
  if (current.model === "granular" && requested.model === "legacy")
    throw badRequest("the company is on granular permissions and the platform never goes back to legacy ones");
  const report =
    current.model === "legacy" && requested.model === "granular"
      ? users.translateGrants(migratedPermissions)
      : { users: 0, dropped: {} };
  users.switchModel(requested);
  return { ...requested, usersMigrated: report.users, droppedPermissions: report.dropped };
}

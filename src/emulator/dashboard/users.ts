import { randomUUID } from "node:crypto";
import { presentPermissions, resolveGrants, type Grants, type PresentedPermissions } from "./userGrants.js";
import { SCIM_USER_SCHEMA, type DashboardUserInput } from "./userInput.js";
import type { CompanyDirectory } from "./directory.js";
import type { PermissionModel, Translation } from "./permissionModel.js";

export { parseDashboardUser, type DashboardUserInput } from "./userInput.js";

/**
 * Dashboard users (the SCIM family). The store keeps users by id and by lower-cased userName,
 * with their grants by directory identifier, and presents them in the company's permission model
 * of the moment, with every workspace, team, role and permission set under its current name.
 */

export const SCIM_LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

type UserRecord = {
  id: string;
  userName: string;
  name: { givenName: string; familyName: string };
  department: string;
  lastSignInAt: string;
  grants: Grants;
  /** Set in the dashboard (`POST /_emulator/dashboard`); the SCIM answer does not show it. */
  suspended: boolean;
};

/** A dashboard user as the API answers it. */
export type DashboardUser = {
  schemas: string[];
  id: string;
  userName: string;
  name: { givenName: string; familyName: string };
  department: string;
  lastSignInAt: string;
  permissions: PresentedPermissions;
};

/** What a migration did: users migrated, and each dropped legacy string with how many grants held it. */
export type MigrationReport = { users: number; dropped: Record<string, number> };

export class DashboardUserStore {
  private readonly records = new Map<string, UserRecord>();
  private readonly idByUserName = new Map<string, string>();
  private current: PermissionModel;

  constructor(
    private readonly directory: CompanyDirectory,
    private readonly initialModel: PermissionModel,
  ) {
    this.current = { ...initialModel };
  }

  get model(): PermissionModel {
    return { ...this.current };
  }

  /** For in-process readers (tests, benchmarks): a snapshot of every account, presented as an answer would be now. */
  get byId(): ReadonlyMap<string, DashboardUser> {
    return new Map([...this.records.values()].map((r) => [r.id, this.present(r)]));
  }

  list(): DashboardUser[] {
    return [...this.records.values()].map((r) => this.present(r));
  }

  /** Forgets every user and returns to the model the emulator started with (the directory is cleared beside it). */
  clear(): void {
    this.records.clear();
    this.idByUserName.clear();
    this.current = { ...this.initialModel };
  }

  get(id: string): DashboardUser | undefined {
    const record = this.records.get(id);
    return record && this.present(record);
  }

  findByUserName(userName: string): DashboardUser | undefined {
    const id = this.idByUserName.get(userName.toLowerCase());
    return id === undefined ? undefined : this.get(id);
  }

  /** Undefined when the userName is taken (the caller answers 409); a SCIM 400 when the grants do not resolve. */
  create(input: DashboardUserInput, now: Date): DashboardUser | undefined {
    const key = input.userName.toLowerCase();
    if (this.idByUserName.has(key)) return undefined;
    const record = this.record(randomUUID(), input, now.toISOString());
    this.records.set(record.id, record);
    this.idByUserName.set(key, record.id);
    return this.present(record);
  }

  /** PUT: replaces everything but `id`, `userName`, `lastSignInAt` and the suspension. */
  replace(existing: DashboardUser, input: DashboardUserInput): DashboardUser {
    const record = this.record(existing.id, { ...input, userName: existing.userName }, existing.lastSignInAt);
    record.suspended = this.records.get(existing.id)?.suspended ?? false;
    this.records.set(record.id, record);
    return this.present(record);
  }

  /** A dashboard suspension or its end; false for an unknown id. */
  setSuspended(id: string, suspended: boolean): boolean {
    const record = this.records.get(id);
    if (record) record.suspended = suspended;
    return record !== undefined;
  }

  /** The userNames of suspended accounts (the state dump shows them). */
  suspendedUserNames(): string[] {
    return [...this.records.values()].filter((r) => r.suspended).map((r) => r.userName);
  }

  /** A sign-in to the dashboard: `lastSignInAt` becomes `at`. */
  signedIn(id: string, at: Date): boolean {
    const record = this.records.get(id);
    if (record) record.lastSignInAt = at.toISOString();
    return record !== undefined;
  }

  delete(id: string): boolean {
    const record = this.records.get(id);
    if (!record) return false;
    this.records.delete(id);
    this.idByUserName.delete(record.userName.toLowerCase());
    return true;
  }

  /** Rewrites every user's workspace and team permissions with `translate` (the migration; the caller then switches the model). */
  translateGrants(translate: (permissions: string[]) => Translation): MigrationReport {
    const report: MigrationReport = { users: 0, dropped: {} };
    const apply = (permissions: string[]): string[] => {
      const translated = translate(permissions);
      for (const p of translated.dropped) report.dropped[p] = (report.dropped[p] ?? 0) + 1;
      return translated.permissions;
    };
    for (const { grants } of this.records.values()) {
      for (const ws of grants.workspaces) {
        ws.permissions = apply(ws.permissions);
        for (const team of ws.teams) team.permissions = apply(team.permissions);
      }
      report.users++;
    }
    return report;
  }

  switchModel(model: PermissionModel): void {
    this.current = { ...model };
  }

  private record(id: string, input: DashboardUserInput, lastSignInAt: string): UserRecord {
    return {
      id,
      userName: input.userName,
      name: { ...input.name },
      department: input.department,
      lastSignInAt,
      grants: resolveGrants(input, this.directory, this.current),
      suspended: false,
    };
  }

  private present(record: UserRecord): DashboardUser {
    return {
      schemas: [SCIM_USER_SCHEMA],
      id: record.id,
      userName: record.userName,
      name: { ...record.name },
      department: record.department,
      lastSignInAt: record.lastSignInAt,
      permissions: presentPermissions(record.grants, this.directory, this.current),
    };
  }
}

/** Order-insensitive JSON of a value: object keys and array items sorted. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).sort().join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Whether two answers' permissions grant the same, whatever the order of their lists. */
export function samePermissions(a: PresentedPermissions, b: PresentedPermissions): boolean {
  return canonical(a) === canonical(b);
}

import { randomUUID } from "node:crypto";

/**
 * The company's workspaces (each with its teams), roles and permission sets. Each has an API
 * identifier (a UUID, as the granular model shows) that stays when the platform renames it, so
 * dashboard users hold their grants by identifier and a rename shows on every user. Workspaces
 * and teams also keep the short id the legacy model has always shown (24 hex characters).
 */

export type Team = { id: string; legacyId: string; name: string };
export type Workspace = { id: string; legacyId: string; name: string; teams: Registry<Team> };
type RoleWorkspace = { workspaceId: string; permissions: string[] };
/** A role bundles permissions with the workspaces they apply to; `permissions` are its company-level ones. */
export type Role = { id: string; name: string; workspaces: RoleWorkspace[]; permissions: string[] };
export type PermissionSet = { id: string; name: string; permissions: string[] };

export const DIRECTORY_KINDS = ["workspace", "team", "role", "permissionSet"] as const;
export type DirectoryKind = (typeof DIRECTORY_KINDS)[number];

const shortLegacyId = (): string => randomUUID().replace(/-/g, "").slice(0, 24);

/** Items of one kind by identifier, with their names unique among them. */
export class Registry<T extends { id: string; name: string }> {
  private readonly byId = new Map<string, T>();
  private readonly idByName = new Map<string, string>();

  get(id: string): T | undefined {
    return this.byId.get(id);
  }

  named(name: string): T | undefined {
    const id = this.idByName.get(name);
    return id === undefined ? undefined : this.byId.get(id);
  }

  add(item: T): T {
    this.byId.set(item.id, item);
    this.idByName.set(item.name, item.id);
    return item;
  }

  /** False, changing nothing, when another item holds the name. */
  rename(item: T, name: string): boolean {
    const holder = this.named(name);
    if (holder && holder !== item) return false;
    this.idByName.delete(item.name);
    item.name = name;
    this.idByName.set(name, item.id);
    return true;
  }

  values(): T[] {
    return [...this.byId.values()];
  }

  clear(): void {
    this.byId.clear();
    this.idByName.clear();
  }
}

export type RenameOutcome = "renamed" | "unknown" | "taken";

export class CompanyDirectory {
  readonly workspaces = new Registry<Workspace>();
  readonly roles = new Registry<Role>();
  readonly permissionSets = new Registry<PermissionSet>();
  /** Team identifier → the workspace the team belongs to. */
  private readonly teamHome = new Map<string, Workspace>();

  addWorkspace(name: string, id: string = randomUUID()): Workspace {
    return this.workspaces.add({ id, legacyId: shortLegacyId(), name, teams: new Registry<Team>() });
  }

  addTeam(workspace: Workspace, name: string, id: string = randomUUID()): Team {
    this.teamHome.set(id, workspace);
    return workspace.teams.add({ id, legacyId: shortLegacyId(), name });
  }

  /** The workspace that holds team `id`, if any. */
  homeOfTeam(id: string): Workspace | undefined {
    return this.teamHome.get(id);
  }

  /** Renames by API identifier (or, for workspaces and teams, the legacy id the legacy model shows). */
  rename(kind: DirectoryKind, id: string, name: string): RenameOutcome {
    const outcome = <T extends { id: string; name: string }>(registry: Registry<T>, item: T | undefined) =>
      item === undefined ? "unknown" : registry.rename(item, name) ? "renamed" : "taken";
    switch (kind) {
      case "workspace":
        return outcome(
          this.workspaces,
          this.workspaces.get(id) ?? this.workspaces.values().find((w) => w.legacyId === id),
        );
      case "team": {
        const found = this.findTeam(id);
        return found ? outcome(found.home.teams, found.team) : "unknown";
      }
      case "role":
        return outcome(this.roles, this.roles.get(id));
      case "permissionSet":
        return outcome(this.permissionSets, this.permissionSets.get(id));
    }
  }

  private findTeam(id: string): { home: Workspace; team: Team } | undefined {
    const home = this.teamHome.get(id);
    if (home) return { home, team: home.teams.get(id)! };
    for (const workspace of this.workspaces.values()) {
      const team = workspace.teams.values().find((t) => t.legacyId === id);
      if (team) return { home: workspace, team };
    }
    return undefined;
  }

  clear(): void {
    this.workspaces.clear();
    this.roles.clear();
    this.permissionSets.clear();
    this.teamHome.clear();
  }

  /** For `GET /_emulator/state`: everything by current name, with both kinds of workspace and team ids. */
  dump() {
    const nameOf = (id: string) => this.workspaces.get(id)?.name;
    return {
      workspaces: this.workspaces.values().map((w) => ({
        id: w.id,
        legacyId: w.legacyId,
        name: w.name,
        teams: w.teams.values().map((t) => ({ ...t })),
      })),
      roles: this.roles.values().map((r) => ({
        id: r.id,
        name: r.name,
        permissions: [...r.permissions],
        workspaces: r.workspaces.map((w) => ({
          appGroupId: w.workspaceId,
          appGroupName: nameOf(w.workspaceId),
          appGroupPermissions: [...w.permissions],
        })),
      })),
      permissionSets: this.permissionSets.values().map((s) => ({ ...s, permissions: [...s.permissions] })),
    };
  }
}

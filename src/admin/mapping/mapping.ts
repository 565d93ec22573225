import { MappingError, parseMapping } from "../../mapping/file.js";
import type { Mapping } from "../../mapping/compiled.js";
import { getBudgetStatus } from "../../reconcile/budget/budgetLedger.js";
import { listUsersWithGroups } from "../../db/idp/userReconcileReads.js";
import { queueDepth } from "../../db/reconcile/queueReads.js";
import { listPlatformIdentifiers, type LearnedIdentifier } from "../../db/platform/identifierRepository.js";
import { desiredDashboardUser } from "../../mapping/desired.js";
import { allowance } from "../../reconcile/budget/budget.js";
import type { AdminDataDeps } from "../deps.js";
import { catalogueEditsInUse, type CatalogueEditInUse } from "./catalogueEdits.js";
import { durationLabel } from "../format.js";
import {
  grantListsOf,
  type GrantList,
  mappingChangeOf,
  type MappingChange,
  ruleGrantsText,
  ruleGroupsText,
  ruleName,
} from "./rules.js";

export type MappingData = {
  /** Where the rules in force come from (the MAPPING_FILE path). */
  file: string;
  /** The mapping in force, as text (YAML). */
  source: string;
  /** "this replica's mapping file differs from the mapping in force (version …)…", when it does. */
  notice?: string;
  /** `lists`: the long lists `grants` abbreviates, in full (absent when there is none). */
  rules: { name: string; groups: string; grants: string; lists?: GrantList[] }[];
  /** The permission model the rules speak, and what loads but deserves attention (legacy strings). */
  permissionModel: "legacy" | "granular";
  warnings: string[];
  /** Workspaces, teams, roles and permission sets with the API identifiers learned from the platform's answers. */
  identifiers: LearnedIdentifier[];
  /** Names the mapping uses that the platform has since renamed (same identifier): each in words. */
  renamed: string[];
  /** Roles, permission sets and teams the mapping uses that were edited in the platform's dashboard (its record). */
  editedInDashboard: CatalogueEditInUse[];
  /** Drafts are not applied from the UI: this says how to apply one instead (edit MAPPING_FILE). */
  applyInstructions: string;
};

export type MappingPreview = {
  /** Problems in the draft; when present nothing else is shown. */
  errors: string[];
  changes: MappingChange[];
  usersAffected: number;
  estimatedCalls: number;
  /** e.g. "about 1.5 days at the current pace". */
  durationLabel: string;
};

/** Users read per query while previewing (the whole IdP directory is streamed, 100k users included). */
const PREVIEW_BATCH = 1000;
/** Changes listed on the page; the counts cover everyone. */
const PREVIEW_CHANGES_SHOWN = 500;

/**
 * Why the UI does not write MAPPING_FILE: every replica reads its own copy of the file (often
 * a read-only ConfigMap or a file under version control), so a write from one replica would
 * put two mappings in force at once, and the next deploy would silently undo it.
 */
const APPLY_BY_FILE =
  "Mappings are applied by editing MAPPING_FILE on every replica (or its source in version control): the connector reloads it automatically, marks the affected users, and the reconciler works through them. This console previews drafts; it does not write the file.";

export async function mappingData(deps: AdminDataDeps): Promise<MappingData> {
  const shown = await deps.desired.shown(deps.db);
  const { mapping } = shown;
  const [identifiers, editedInDashboard] = await Promise.all([
    listPlatformIdentifiers(deps.db),
    catalogueEditsInUse(deps.db, mapping),
  ]);
  return {
    permissionModel: mapping.permissionModel,
    warnings: mapping.warnings.map((w) => `line ${w.line}: ${w.message}`),
    identifiers,
    renamed: renamedInUse(mapping, identifiers),
    editedInDashboard,
    file: deps.mappingFile,
    source: shown.sourceText,
    ...(shown.fileDiffers ? { notice: shown.fileDiffers } : {}),
    rules: mapping.rules.map((rule) => ({
      name: ruleName(rule),
      groups: ruleGroupsText(rule),
      grants: ruleGrantsText(rule),
      ...grantListsOf(rule),
    })),
    applyInstructions: APPLY_BY_FILE,
  };
}

/** Names the mapping uses (by name, not pinned by id) that the platform renamed: the rule now names nothing. */
export function renamedInUse(mapping: Mapping, identifiers: readonly LearnedIdentifier[]): string[] {
  const current = new Set(identifiers.map((i) => `${i.kind}:${i.name}`));
  const used = new Map<string, string>();
  for (const rule of mapping.rules) {
    for (const role of rule.roles ?? []) used.set(`role:${role}`, `role "${role}" (line ${rule.line})`);
    for (const ws of rule.workspaces) {
      used.set(`workspace:${ws.name}`, `workspace "${ws.name}" (line ${rule.line})`);
      for (const set of ws.permissionSets)
        used.set(`permissionSet:${set}`, `permission set "${set}" (line ${rule.line})`);
      for (const team of ws.teams) used.set(`team:${team.name}`, `team "${team.name}" (line ${rule.line})`);
    }
  }
  const out: string[] = [];
  for (const i of identifiers) {
    if (!i.previousName) continue;
    const key = `${i.kind}:${i.previousName}`;
    const use = used.get(key);
    if (use && !current.has(key))
      out.push(
        `${use} was renamed on the platform to "${i.name}" (identifier ${i.id}, ${i.renamedAt?.toISOString() ?? ""}): name it "${i.name}" or pin \`id: ${i.id}\``,
      );
  }
  return out;
}

/**
 * A dry run of a draft: every IdP user's desired dashboard user under the mapping in force and
 * under the draft, compared. Reads only; nothing is marked, queued or sent.
 */
export async function previewMapping(
  deps: Pick<AdminDataDeps, "db" | "clock" | "budget" | "desired">,
  draft: string,
): Promise<MappingPreview> {
  const refused = (error: unknown): MappingPreview => {
    if (error instanceof MappingError)
      return { errors: error.problems, changes: [], usersAffected: 0, estimatedCalls: 0, durationLabel: "" };
    throw error;
  };
  let next: Mapping;
  try {
    next = parseMapping(draft, "draft");
  } catch (error) {
    return refused(error);
  }
  let compared: Awaited<ReturnType<typeof compareMappings>>;
  try {
    // A groupPattern that exceeds its time limit on some group name is refused here (groupPattern.ts).
    compared = await compareMappings(deps, (await deps.desired.shown(deps.db)).mapping, next);
  } catch (error) {
    return refused(error);
  }
  const { changes, usersAffected } = compared;
  const now = deps.clock.now();
  const [budget, depth] = await Promise.all([getBudgetStatus(deps.db, deps.budget, now), queueDepth(deps.db, now)]);
  const queued = depth.byPriority.reduce((n, p) => n + p.pending, 0);
  // One platform call per affected user: a create is one POST, an update one PUT, a removal one DELETE.
  const estimatedCalls = usersAffected;
  return {
    errors: [],
    changes,
    usersAffected,
    estimatedCalls,
    durationLabel: durationLabel({
      calls: estimatedCalls,
      queued,
      remainingToday: budget.remaining,
      perDay: allowance(deps.budget, "ordinary"),
    }),
  };
}

async function compareMappings(
  deps: Pick<AdminDataDeps, "db">,
  current: Mapping,
  next: Mapping,
): Promise<{ changes: MappingChange[]; usersAffected: number }> {
  const changes: MappingChange[] = [];
  let usersAffected = 0;
  for (let after: string | undefined; ;) {
    const users = await listUsersWithGroups(deps.db, after, PREVIEW_BATCH);
    for (const user of users) {
      const change = mappingChangeOf(
        user.userName,
        desiredDashboardUser(user, user.groups, current),
        desiredDashboardUser(user, user.groups, next),
        next.equivalents,
      );
      if (!change) continue;
      usersAffected++;
      if (changes.length < PREVIEW_CHANGES_SHOWN) changes.push(change);
    }
    if (users.length < PREVIEW_BATCH) break;
    after = users[users.length - 1]!.id;
  }
  changes.sort((a, b) => a.userName.localeCompare(b.userName));
  return { changes, usersAffected };
}

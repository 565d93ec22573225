import { MappingError, parseMapping, type Mapping } from "../mapping/file.js";
import { getBudgetStatus } from "../reconcile/budgetLedger.js";
import { listUsersWithGroups } from "../db/idpUserReconcileReads.js";
import { queueDepth } from "../db/reconcileQueueRepository.js";
import { desiredDashboardUser } from "../mapping/desired.js";
import { allowance } from "../reconcile/budget.js";
import type { AdminDataDeps } from "./deps.js";
import { durationLabel } from "./format.js";
import { mappingChangeOf, type MappingChange, ruleGrantsText, ruleGroupsText, ruleName } from "./rules.js";

export type MappingData = {
  /** Where the rules in force come from (the MAPPING_FILE path). */
  file: string;
  /** The mapping in force, as text (YAML). */
  source: string;
  rules: { name: string; groups: string; grants: string }[];
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

export function mappingData(deps: AdminDataDeps): MappingData {
  const mapping = deps.mappings.current();
  return {
    file: deps.mappingFile,
    source: deps.mappings.sourceText(),
    rules: mapping.rules.map((rule) => ({
      name: ruleName(rule),
      groups: ruleGroupsText(rule),
      grants: ruleGrantsText(rule),
    })),
    applyInstructions: APPLY_BY_FILE,
  };
}

/**
 * A dry run of a draft: every IdP user's desired dashboard user under the mapping in force and
 * under the draft, compared. Reads only; nothing is marked, queued or sent.
 */
export async function previewMapping(
  deps: Pick<AdminDataDeps, "db" | "clock" | "budget" | "mappings">,
  draft: string,
): Promise<MappingPreview> {
  let next: Mapping;
  try {
    next = parseMapping(draft, "draft");
  } catch (error) {
    if (error instanceof MappingError)
      return { errors: error.problems, changes: [], usersAffected: 0, estimatedCalls: 0, durationLabel: "" };
    throw error;
  }
  const { changes, usersAffected } = await compareMappings(deps, deps.mappings.current(), next);
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

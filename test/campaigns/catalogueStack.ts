import { emulatorState, emulatorStats, startStack, type Stack } from "../support/stack.js";
import { loadFixtures } from "../support/emulator.js";
import { CATALOGUE_FIXTURES, CATALOGUE_MAPPING } from "../support/mapping.js";

/**
 * What the two tests of access assigned in the IdP (assignedAccess, entraRoleRemoval) start and
 * read: a granular platform holding the catalogue's workspace and permission set, removals kept a
 * day (a reduction, not a deletion), and one user's side of it.
 */
export async function startCatalogueStack(mapping = CATALOGUE_MAPPING): Promise<Stack> {
  const stack = await startStack({
    mapping,
    emulator: { permissions: "granular" },
    env: { RECONCILE_DEPROVISION_GRACE_MS: "3600000" },
  });
  // The platform has no API to create permission sets: the emulator's fixtures stand for the company's own.
  await loadFixtures(stack.emulator.url, CATALOGUE_FIXTURES);
  return stack;
}

/** The platform calls spent today, `userName`'s dashboard user as JSON, and the budget ledger's debits. */
export function platformSide(stack: () => Stack, userName: string) {
  return {
    used: async () => (await emulatorStats(stack())).scimDaily.used,
    held: async () =>
      JSON.stringify((await emulatorState(stack())).dashboardUsers.find((u) => u.userName === userName) ?? null),
    debits: async () =>
      (await stack().service.db.query(`SELECT action, uses_reserve FROM budget_debits ORDER BY id`)) as {
        action: string;
        uses_reserve: boolean;
      }[],
  };
}

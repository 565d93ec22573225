import type { Database } from "../../db/database.js";
import { grantsOf, type Grant } from "../../mapping/reasons.js";
import { listConfirmedUnmanaged, type UnmanagedAccountView } from "../../platformRecord/unmanaged.js";
import type { AccessQuery } from "./rows.js";

/**
 * The access report's accounts "not managed by the IdP" (docs/platform-record.md): accounts made by
 * hand on the platform, confirmed by their lookup, one row per grant they held then. No rule and no
 * group gives them, so a `group` or `rule` filter leaves them out; they are known now only, so a
 * report as of a past moment leaves them out too.
 */

export type UnmanagedAccessRow = Grant & {
  userName: string;
  notManagedByIdp: { addedBy: string | null; firstSeen: string; confirmedAt: string | null; platformId: string | null };
};

export async function unmanagedAccessRows(db: Database, query: AccessQuery): Promise<UnmanagedAccessRow[]> {
  if (query.at || query.group || query.rule) return [];
  const accounts = await listConfirmedUnmanaged(db);
  return accounts.filter((a) => !query.user || a.userName.startsWith(query.user.toLowerCase())).flatMap(rowsOf(query));
}

const rowsOf = (query: AccessQuery) => (a: UnmanagedAccountView) => {
  const held = { userName: a.userName, givenName: "", familyName: "", department: "", ...a.permissions! };
  return grantsOf({ roles: [], ...held })
    .filter(
      (g) =>
        (!query.workspace || g.workspace === query.workspace) &&
        (!query.team || g.team === query.team) &&
        (!query.permission || g.permission === query.permission) &&
        (!query.admins || g.permission === "admin"),
    )
    .map((g) => ({
      ...g,
      userName: a.userName,
      notManagedByIdp: {
        addedBy: a.addedBy,
        firstSeen: a.firstSeen,
        confirmedAt: a.confirmedAt,
        platformId: a.platformId,
      },
    }));
};

/** The row's reason in words, where a managed row names its rules. */
export function notManagedWords(row: UnmanagedAccessRow): string {
  const by = row.notManagedByIdp.addedBy ? ` by ${row.notManagedByIdp.addedBy}` : "";
  return `not managed by the IdP: made by hand on the platform${by}, first seen ${row.notManagedByIdp.firstSeen}`;
}

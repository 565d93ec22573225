import type { Database } from "../../src/db/database.js";

/**
 * The benches' IdP at scale: groups Team-000…, users user1@example.com… each in three teams, and a
 * mapping that grants workspace permissions per team family (so every user has a different
 * union to compute). Shared by bench/resync-plan.ts and bench/access-report.ts.
 */
export async function seedTeamsWorld(
  db: Database,
  users: number,
  groups: number,
  options: { inactiveEvery?: number } = {},
): Promise<void> {
  await db.query(
    `INSERT INTO idp_groups (display_name, resource) SELECT format('Team-%s', lpad(g::text, 3, '0')), '{}'::jsonb FROM generate_series(0, $1 - 1) g`,
    [groups],
  );
  await db.query(
    `INSERT INTO idp_users (user_name, active, given_name, family_name, department, resource)
     SELECT format('user%s@example.com', u), $2 = 0 OR u % $2 <> 0, format('User%s', u), 'Bench', (ARRAY['Finance & Accounting','marketing',NULL])[1 + u % 3], '{}'::jsonb
       FROM generate_series(1, $1) u`,
    [users, options.inactiveEvery ?? 0],
  );
  await db.query(
    `INSERT INTO idp_group_members (group_id, user_id)
     SELECT g.id, u.id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM idp_users) u
       JOIN (SELECT id, row_number() OVER (ORDER BY display_name) - 1 AS k FROM idp_groups) g
         ON g.k IN (u.n % $1, (u.n * 7) % $1, (u.n * 13) % $1)
     ON CONFLICT DO NOTHING`,
    [groups],
  );
}

/** 20 rules by team family (Team-00x…Team-19x) and one for admins (Team-499). */
export const TEAMS_MAPPING = `department:
  default: engineering
  translate: { "Finance & Accounting": finance }
rules:${Array.from(
  { length: 20 },
  (_, k) => `
  - groupPattern: "^Team-${String(k).padStart(2, "0")}"
    description: Team family ${k}
    ${k % 4 === 0 ? "department: marketing" : ""}
    workspaces:
      - name: Workspace ${k % 5}
        permissions: [basic_access${k % 2 ? ", export_user_data" : ""}]
        teams:
          - name: Team ${k}
            permissions: [basic_access]`,
).join("")}
  - group: Team-499
    description: Admins
    companyPermissions: [admin]
`;

import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseMapping } from "../../src/mapping/file.js";
import {
  migrateMapping,
  type LearnedIdentifier,
  type MigratedMapping,
  type MigrationStopped,
} from "../../src/mapping/migrate.js";
import { formatMigrationReport, formatMigrationStop } from "../../src/mapping/migrateReport.js";
import { BASIC_ACCESS_GRANULAR } from "../../src/vocabulary/permissions.js";

/**
 * `mapping migrate`'s pure half: legacy text in, granular text and a report out, with the
 * published table (src/vocabulary/permissions.ts), the file's `vocabulary.equivalents` for
 * what the table names by display name only, and its comments and layout kept.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");

/** A legacy file around one workspace entry (indented as under `workspaces:`). */
function fileWith(workspace: string, extra = ""): string {
  return `department:
  default: engineering

rules:
  - description: Marketing
    group: Marketing
    workspaces:
${workspace}
${extra}`;
}

function migrated(text: string, identifiers?: LearnedIdentifier[]): MigratedMapping {
  const result = migrateMapping(text, identifiers ? { identifiers } : {});
  if (result.outcome !== "migrated")
    throw new Error(
      `expected a migration, got ${result.outcome}: ${result.outcome === "stopped" ? result.problems.join("; ") : ""}`,
    );
  return result;
}

function stopped(text: string): MigrationStopped {
  const result = migrateMapping(text);
  if (result.outcome !== "stopped") throw new Error(`expected the migration to stop, got ${result.outcome}`);
  return result;
}

type Workspace = {
  name?: string;
  id?: string;
  permissions?: string[];
  permissionSets?: unknown[];
  teams?: Workspace[];
};
type File = {
  permissionModel?: string;
  rules: { roles?: unknown[]; workspaces?: Workspace[] }[];
  vocabulary?: Record<string, unknown>;
};

function workspaceOf(text: string, rule = 0, workspace = 0): Workspace {
  return (parse(text) as File).rules[rule]!.workspaces![workspace]!;
}

describe("mapping migrate: the published table", () => {
  it.each([
    { legacy: ["basic_access"], granular: [...BASIC_ACCESS_GRANULAR] },
    { legacy: ["send_campaigns_canvases"], granular: ["launch_campaigns", "launch_canvases"] },
    { legacy: ["import_update_user_data"], granular: ["view_import_users", "import_users", "edit_user_data"] },
    { legacy: ["manage_tags"], granular: ["view_tags", "edit_tags", "delete_tags"] },
    { legacy: ["manage_dashboard_users"], granular: ["edit_dashboard_users"] },
    { legacy: ["admin", "view_pii"], granular: ["admin", "view_pii"] },
    // Already granular (not a legacy string): kept as given, in place.
    { legacy: ["view_tags", "manage_teams"], granular: ["view_tags", "view_teams", "edit_teams", "archive_teams"] },
  ])("$legacy → $granular", ({ legacy, granular }) => {
    const { text } = migrated(fileWith(`      - name: EU\n        permissions: [${legacy.join(", ")}]`));
    expect(workspaceOf(text).permissions).toEqual(granular);
    expect((parse(text) as File).permissionModel).toBe("granular");
  });

  it("de-duplicates, the first occurrence winning, and keeps granular strings already there", () => {
    const { text, report } = migrated(
      fileWith(
        "      - name: EU\n        permissions: [edit_campaigns, send_campaigns_canvases, basic_access, launch_canvases]",
      ),
    );
    const permissions = workspaceOf(text).permissions!;
    expect(permissions.slice(0, 3)).toEqual(["edit_campaigns", "launch_campaigns", "launch_canvases"]);
    expect(permissions[3]).toBe("view_campaigns");
    expect(new Set(permissions).size).toBe(permissions.length);
    expect(permissions).toHaveLength(2 + BASIC_ACCESS_GRANULAR.length);
    expect(report.lists[0]).toMatchObject({ merged: 2, kept: ["edit_campaigns", "launch_canvases"] });
    const words = formatMigrationReport("m.yaml", { outcome: "migrated", text, report });
    expect(words).toContain("    basic_access → 43 granular permissions (view_campaigns, edit_campaigns, …)\n");
    expect(words).toContain("    2 duplicates merged\n");
  });

  it("translates team permissions and the vocabulary's legacy lists the same way", () => {
    const { text } = migrated(
      fileWith(
        "      - name: EU\n        teams:\n          - name: Lifecycle\n            permissions: [send_campaigns_canvases]",
        "vocabulary:\n  workspacePermissions: [admin, manage_tags]\n  teamPermissions: [basic_access, manage_dashboard_users]\n",
      ),
    );
    expect(workspaceOf(text).teams![0]!.permissions).toEqual(["launch_campaigns", "launch_canvases"]);
    const vocabulary = (parse(text) as File).vocabulary!;
    expect(vocabulary.workspacePermissions).toEqual(["admin", "view_tags", "edit_tags", "delete_tags"]);
    expect(vocabulary.teamPermissions).toEqual([...BASIC_ACCESS_GRANULAR, "edit_dashboard_users"]);
  });

  it("leaves company permissions alone and inserts permissionModel after department, with its comment", () => {
    const { text } = migrated(
      "department:\n  default: engineering\n\nrules:\n  - group: Admins\n    companyPermissions: [admin, manage_company_settings]\n",
    );
    expect(text).toBe(
      "department:\n  default: engineering\n\n" +
        "# The rules below use the platform's granular permission strings (`scim-connector mapping migrate`).\n" +
        "permissionModel: granular\n\nrules:\n  - group: Admins\n    companyPermissions: [admin, manage_company_settings]\n",
    );
  });

  it("writes an explicit `permissionModel: legacy` as granular, in place", () => {
    const { text } = migrated(
      "department:\n  default: x\nrules: []\npermissionModel: legacy # until the platform migrates\n",
    );
    expect(text).toBe(
      "department:\n  default: x\nrules: []\npermissionModel: granular # until the platform migrates\n",
    );
  });

  it("says so for a file already granular, and changes nothing", () => {
    const text =
      "permissionModel: granular\ndepartment:  { default: x }\nrules:\n  - group: A\n    workspaces: [{name: EU, permissions: [basic_access]}]\n";
    const result = migrateMapping(text);
    expect(result).toMatchObject({ outcome: "alreadyGranular", text });
    if (result.outcome === "stopped") return;
    expect(formatMigrationReport("m.yaml", result)).toContain("m.yaml is already granular");
  });
});

describe("mapping migrate: layout", () => {
  const COMMENTED = `# Who gets what
department:
  default: engineering
  # our default

rules:
  # Marketing first
  - description: Marketing # the big one
    group: Marketing
    workspaces:
      - name: EU # production
        # everything they need
        permissions: [manage_tags, view_pii] # reviewed 2026
        teams:
          - name: Lifecycle
            permissions:
              - admin # team lead
              - manage_dashboard_users
# Vocabulary next
vocabulary:
  enabled: true
# end
`;

  it("keeps comments, blank lines, key order and flow style", () => {
    const { text } = migrated(COMMENTED);
    expect(text).toBe(
      COMMENTED.replace(
        "\n\nrules:",
        "\n\n# The rules below use the platform's granular permission strings (`scim-connector mapping migrate`).\npermissionModel: granular\n\nrules:",
      )
        .replace("[manage_tags, view_pii]", "[view_tags, edit_tags, delete_tags, view_pii]")
        .replace("- manage_dashboard_users", "- edit_dashboard_users"),
    );
  });

  it("writes a list too long for one line as a block list, and keeps the CRLF line ends", () => {
    const { text } = migrated(fileWith("      - name: EU\n        permissions: [basic_access]").replace(/\n/g, "\r\n"));
    expect(text).toContain("        permissions:\r\n          - view_campaigns\r\n          - edit_campaigns\r\n");
    expect(text).not.toMatch(/[^\r]\n/);
  });
});

describe("mapping migrate: display names and vocabulary.equivalents", () => {
  it("stops on a display name with no equivalent, naming it, its legacy string, its uses and the YAML to add", () => {
    const result = stopped(
      fileWith(
        "      - name: EU\n        permissions: [approve_deny_campaigns]\n        teams:\n          - name: Lifecycle\n            permissions: [publish_cards]",
      ),
    );
    expect(result.problems).toEqual([
      expect.stringMatching(
        /^"Approve Campaigns" .*from approve_deny_campaigns.* rule "Marketing" \(line 5\), workspace EU, line 9$/,
      ),
      expect.stringMatching(/^"Approve Canvases" .*from approve_deny_campaigns/),
      expect.stringMatching(/^publish_cards \(not in the published table\).*team Lifecycle, line 12$/),
    ]);
    expect(result.equivalentsToAdd).toBe(
      [
        "vocabulary:",
        "  equivalents:",
        '    "Approve Campaigns": # from approve_deny_campaigns',
        '    "Approve Canvases": # from approve_deny_campaigns',
        '    "publish_cards": # legacy, not in the published table',
      ].join("\n"),
    );
    // The YAML is what the file needs: pasted with values, the migration goes through.
    const answered = result
      .equivalentsToAdd!.replace(/"Approve Campaigns":.*/, '"Approve Campaigns": approve_campaigns')
      .replace(/"Approve Canvases":.*/, '"Approve Canvases": [approve_canvases]')
      .replace(/"publish_cards":.*/, '"publish_cards": []');
    const { text } = migrated(
      fileWith(
        "      - name: EU\n        permissions: [approve_deny_campaigns]\n        teams:\n          - name: Lifecycle\n            permissions: [publish_cards]",
        answered + "\n",
      ),
    );
    expect(workspaceOf(text).permissions).toEqual(["approve_campaigns", "approve_canvases"]);
    expect(formatMigrationStop("m.yaml", result)).toContain("m.yaml was not migrated (nothing written)");
  });

  it("stops when an equivalent is there without a value (the pasted YAML, not yet answered)", () => {
    const result = stopped(
      fileWith(
        "      - name: EU\n        permissions: [export_user_data]",
        'vocabulary:\n  equivalents:\n    "Export User Data":\n',
      ),
    );
    expect(result.problems).toEqual([expect.stringContaining('"Export User Data"')]);
    expect(result.problems[0]).toContain("without a value");
  });

  it("honours the equivalents, an empty list dropping the permission on purpose", () => {
    const { text, report } = migrated(
      fileWith(
        "      - name: EU\n        permissions: [launch_content_blocks, edit_segments, publish_cards]",
        'vocabulary:\n  equivalents:\n    "Edit Content Blocks": edit_content_blocks\n    "Archive Content Blocks": []\n' +
          '    "Archive Segments": [archive_segments]\n    publish_cards: []\n',
      ),
    );
    expect(workspaceOf(text).permissions).toEqual(["edit_content_blocks", "launch_content_blocks", "archive_segments"]);
    const words = formatMigrationReport("m.yaml", { outcome: "migrated", text, report });
    expect(words).toContain(
      'launch_content_blocks → edit_content_blocks, launch_content_blocks ("Edit Content Blocks" from vocabulary.equivalents; "Archive Content Blocks" dropped on purpose',
    );
    expect(words).toContain('publish_cards → nothing ("publish_cards" dropped on purpose');
    expect(words).toContain(
      "1 rule; 1 permission list migrated: 3 legacy strings translated, 3 granular strings written",
    );
  });
});

describe("mapping migrate: what the granular model cannot express", () => {
  it("stops on a workspace with both permissions and a permission set, naming rule, line and workspace", () => {
    const result = stopped(
      fileWith("      - name: EU\n        permissions: [basic_access]\n        permissionSets: [Read only]"),
    );
    expect(result.problems).toEqual([
      expect.stringMatching(
        /^rule "Marketing" \(line 5\), workspace EU \(line 8\): has both permissions and a permission set.*Fix: /,
      ),
    ]);
    expect(result.equivalentsToAdd).toBeNull();
  });

  it("stops on more than one permission set in one workspace", () => {
    const result = stopped(fileWith("      - name: EU\n        permissionSets: [Read only, Developers]"));
    expect(result.problems).toEqual([expect.stringContaining("workspace EU (line 8): names 2 permission sets")]);
  });

  it("lets a workspace with one set and no permissions through", () => {
    const { text } = migrated(
      fileWith("      - name: EU\n        permissions: []\n        permissionSets: [Read only]"),
    );
    expect(workspaceOf(text).permissionSets).toEqual(["Read only"]);
  });
});

describe("mapping migrate --pin-ids", () => {
  const EU = "0b6f3d2e-1c4a-4e8b-9f00-000000000001";
  const LIFECYCLE = "0b6f3d2e-1c4a-4e8b-9f00-000000000002";
  const SET = "0b6f3d2e-1c4a-4e8b-9f00-000000000003";
  const ROLE = "0b6f3d2e-1c4a-4e8b-9f00-000000000004";
  const identifiers: LearnedIdentifier[] = [
    { kind: "workspace", id: EU, name: "EU", workspaceId: null },
    { kind: "team", id: LIFECYCLE, name: "Lifecycle", workspaceId: EU },
    { kind: "team", id: "0b6f3d2e-1c4a-4e8b-9f00-000000000009", name: "Lifecycle", workspaceId: "elsewhere" },
    { kind: "permissionSet", id: SET, name: "Read only", workspaceId: null },
    { kind: "role", id: ROLE, name: "Marketer", workspaceId: null },
  ];

  it("adds the learned identifiers beside the names, and lists the names with none", () => {
    const text = `department:
  default: engineering
rules:
  - group: Marketing
    roles: [Marketer, Unknown role]
    workspaces:
      - name: EU
        permissionSets:
          - Read only # the default
        teams:
          - name: Lifecycle
            permissions: [basic_access]
      - name: US
        permissions: [view_pii]
        teams: [{name: Lifecycle, permissions: [admin]}]
`;
    const result = migrated(text, identifiers);
    const file = parse(result.text) as File;
    expect(file.rules[0]!.roles).toEqual([{ name: "Marketer", id: ROLE }, "Unknown role"]);
    const [eu, us] = file.rules[0]!.workspaces!;
    expect(eu).toMatchObject({ name: "EU", id: EU, permissionSets: [{ name: "Read only", id: SET }] });
    expect(Object.keys(eu!)).toEqual(["name", "id", "permissionSets", "teams"]);
    expect(eu!.teams![0]).toMatchObject({ name: "Lifecycle", id: LIFECYCLE });
    expect(us).not.toHaveProperty("id");
    expect(us!.teams![0]).not.toHaveProperty("id");
    expect(result.text).toContain("          - name: Read only # the default\n            id: ");
    expect(result.text).toContain(`roles: [{name: Marketer, id: ${ROLE}}, Unknown role]`);
    const words = formatMigrationReport("m.yaml", result);
    expect(words).toContain(`role Marketer → id ${ROLE}`);
    expect(words).toMatch(/role Unknown role \(line 5\): no identifier learned yet/);
    expect(words).toMatch(/workspace US \(line 13\): no identifier learned yet/);
    expect(words).toMatch(/team Lifecycle \(line 15\): its workspace's identifier is not known/);
  });

  it("pins a file already granular without touching its permissions", () => {
    const text =
      "permissionModel: granular\ndepartment: {default: x}\nrules:\n  - group: A\n    workspaces:\n      - name: EU\n        permissions: [edit_segments]\n";
    const result = migrateMapping(text, { identifiers });
    expect(result.outcome).toBe("alreadyGranular");
    if (result.outcome === "stopped") return;
    expect(result.text).toBe(text.replace("- name: EU\n", `- name: EU\n        id: ${EU}\n`));
  });
});

describe("mapping migrate: the result loads", () => {
  // Needs the granular schema of src/mapping/file.ts (permissionModel, equivalents, { name, id }).
  it("migrates a copy of the legacy example mapping (the one shipped before the granular model) into a file parseMapping accepts", () => {
    const example = readFileSync(path.join(ROOT, "test/mapping/fixtures/legacy-example.yaml"), "utf8")
      .replace("        permissionSets: [Read only]\n", "")
      .concat('\nvocabulary:\n  equivalents:\n    "Export User Data": export_user_data\n');
    const { text } = migrated(example, [
      { kind: "workspace", id: "0b6f3d2e-1c4a-4e8b-9f00-000000000001", name: "EU Production", workspaceId: null },
    ]);
    const mapping = parseMapping(text, "migrated.yaml");
    expect(mapping.permissionModel).toBe("granular");
    expect(mapping.rules).toHaveLength(4);
    expect(mapping.rules[1]!.workspaces[0]!.name).toBe("id:0b6f3d2e-1c4a-4e8b-9f00-000000000001");
  });
});

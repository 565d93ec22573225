import { describe, expect, it } from "vitest";
import { loadMappingFile, mappingHash, MappingError, parseMapping } from "../../src/mapping/file.js";
import { ConfigError } from "../../src/config/env.js";
import { didYouMean } from "../../src/mapping/problems.js";

const VALID = `department:
  default: engineering
  fromAttribute: true
  translate: { "Finance & Accounting": finance }
  allowed: [agency, bi, c_suite, engineering, finance, marketing, pm]
rules:
  - group: Platform Admins
    companyPermissions: [admin]
  - groupExternalId: 00g1abcd
    department: marketing
    workspaces:
      - name: EU Production
        permissions: [basic_access, send_campaigns_canvases]
        permissionSets: [Read only]
        teams:
          - name: Lifecycle
            permissions: [basic_access]
  - groupPattern: "^Analysts-"
    workspaces:
      - name: EU Production
        permissions: [export_user_data]
`;

/** The error `run` throws; fails the test when it throws nothing. */
function captureError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected the mapping to be rejected");
}

function problemsOf(text: string): string[] {
  const error = captureError(() => parseMapping(text, "m.yaml"));
  expect(error).toBeInstanceOf(MappingError);
  return (error as MappingError).problems;
}

describe("parseMapping: the issue's format", () => {
  it("accepts the documented example and compiles every rule", () => {
    const m = parseMapping(VALID, "m.yaml");
    expect(m.department).toEqual({
      default: "engineering",
      fromAttribute: true,
      translate: { "Finance & Accounting": "finance" },
      allowed: ["agency", "bi", "c_suite", "engineering", "finance", "marketing", "pm"],
    });
    expect(m.rules.map((r) => [r.index, r.line])).toEqual([
      [0, 7],
      [1, 9],
      [2, 18],
    ]);
    expect(m.rules[0]!.groups).toEqual(["Platform Admins"]);
    expect(m.rules[1]!.groupExternalId).toBe("00g1abcd");
    expect(m.rules[1]!.workspaces[0]!.teams).toEqual([{ name: "Lifecycle", permissions: ["basic_access"] }]);
    expect(m.rules[2]!.groupPattern?.test("analysts-eu")).toBe(true);
    expect(m.vocabulary?.companyPermissions).toContain("admin");
  });

  it("defaults fromAttribute to true and translate to empty; allowed is optional", () => {
    const m = parseMapping("department: { default: pm }\nrules: []\n");
    expect(m.department).toEqual({ default: "pm", fromAttribute: true, translate: {} });
    expect(m.rules).toEqual([]);
  });

  it("accepts `groups:` lists and merges them with `group:`", () => {
    const m = parseMapping("department: { default: pm }\nrules:\n  - group: A\n    groups: [B, C]\n");
    expect(m.rules[0]!.groups).toEqual(["A", "B", "C"]);
  });

  it("ships config files that load", async () => {
    for (const file of ["config/mapping.yaml", "config/mapping.example.yaml"]) {
      const m = await loadMappingFile(file);
      expect(m.rules.length).toBeGreaterThan(0);
    }
  });

  it("reports a missing file with the fix", async () => {
    await expect(loadMappingFile("config/does-not-exist.yaml")).rejects.toThrow(/MAPPING_FILE/);
  });
});

describe("parseMapping: every error names the line, column and fix", () => {
  const cases: { name: string; yaml: string; expected: string[] }[] = [
    {
      name: "unknown key with a close spelling",
      yaml: "department: { default: pm }\nrules:\n  - group: A\n    workspace:\n      - name: W\n        permissions: [basic_access]\n",
      expected: ["m.yaml:4:5: unknown key 'workspace' in rule 1: did you mean 'workspaces'?"],
    },
    {
      name: "unknown top-level key without a close spelling",
      yaml: "department: { default: pm }\nrules: []\nzzz: 1\n",
      expected: [
        "m.yaml:3:1: unknown key 'zzz': allowed keys here are 'permissionModel', 'department', 'rules', 'vocabulary'",
      ],
    },
    {
      name: "misspelt team key",
      yaml: "department: { default: pm }\nrules:\n  - group: A\n    workspaces:\n      - name: W\n        teams:\n          - name: T\n            permisions: [basic_access]\n            permissions: [basic_access]\n",
      expected: ["m.yaml:8:13: unknown key 'permisions' in rule 1, workspace 1, team 1: did you mean 'permissions'?"],
    },
    {
      name: "bad regular expression",
      yaml: 'department: { default: pm }\nrules:\n  - groupPattern: "^Analysts-("\n',
      expected: ["m.yaml:3:19: groupPattern is not a valid regular expression"],
    },
    {
      name: "permission outside the vocabulary, with a suggestion",
      yaml: "department: { default: pm }\nrules:\n  - group: A\n    companyPermissions: [admn]\n",
      expected: ["m.yaml:4:26: unknown company permission 'admn': did you mean 'admin'?"],
    },
    {
      name: "workspace and team permissions are checked against their own lists",
      yaml: "department: { default: pm }\nrules:\n  - group: A\n    workspaces:\n      - name: W\n        permissions: [view_pii]\n        teams: [{ name: T, permissions: [view_pii] }]\n",
      expected: ["m.yaml:7:42: unknown team permission 'view_pii'"],
    },
    {
      name: "a declared vocabulary replaces the built-in list",
      yaml: "department: { default: pm }\nvocabulary: { companyPermissions: [owner] }\nrules:\n  - group: A\n    companyPermissions: [owner, admin]\n",
      expected: ["m.yaml:5:33: unknown company permission 'admin'"],
    },
    {
      name: "a list where text was given",
      yaml: "department: { default: pm }\nrules:\n  - group: A\n    companyPermissions: admin\n",
      expected: ["m.yaml:4:25: rule 1, companyPermissions must be a list"],
    },
    {
      name: "missing department",
      yaml: "rules: []\n",
      expected: ["m.yaml:1:1: department is missing: add `department:`"],
    },
    {
      name: "a rule that matches nothing",
      yaml: "department: { default: pm }\nrules:\n  - companyPermissions: [admin]\n",
      expected: ["m.yaml:3:5: rule 1 matches no group"],
    },
    {
      name: "a workspace that grants nothing",
      yaml: "department: { default: pm }\nrules:\n  - group: A\n    workspaces: [{ name: W }]\n",
      expected: ["m.yaml:4:18: workspace 'W' grants nothing"],
    },
    {
      name: "departments must be allowed (default, translate targets and rules)",
      yaml: "department:\n  default: eng\n  translate: { Fin: financ }\n  allowed: [engineering, finance]\nrules:\n  - group: A\n    department: marketing\n",
      expected: [
        "m.yaml:2:12: department 'eng' is not in department.allowed",
        "m.yaml:3:21: department 'financ' is not in department.allowed: did you mean 'finance'?",
        "m.yaml:7:17: department 'marketing' is not in department.allowed",
      ],
    },
    {
      name: "YAML syntax errors",
      yaml: "department: { default: pm\nrules: []\n",
      expected: ["m.yaml:"],
    },
    {
      name: "duplicate keys",
      yaml: "department: { default: pm }\nrules: []\nrules: []\n",
      expected: ["m.yaml:3:1: YAML: Map keys must be unique"],
    },
    {
      name: "an empty file",
      yaml: "# nothing\n",
      expected: ["m.yaml:1:1: the mapping file is empty"],
    },
  ];

  it.each(cases)("$name", ({ yaml, expected }) => {
    const problems = problemsOf(yaml);
    for (const [i, prefix] of expected.entries()) expect(problems[i], problems.join("\n")).toContain(prefix);
  });

  it("lists every problem of a file in one error, in file order", () => {
    const problems = problemsOf(
      "department: { default: pm }\nrules:\n  - group: A\n    companyPermissions: [admn]\n    workspace: []\n  - groupPattern: '('\nextra: 1\n",
    );
    expect(problems.map((p) => p.split(": ")[0])).toEqual(["m.yaml:4:26", "m.yaml:5:5", "m.yaml:6:19", "m.yaml:7:1"]);
  });

  it("turns the vocabulary check off with enabled: false", () => {
    const m = parseMapping(
      "department: { default: pm }\nvocabulary: { enabled: false }\nrules:\n  - group: A\n    companyPermissions: [anything]\n",
    );
    expect(m.vocabulary).toBeNull();
    expect(m.rules[0]!.companyPermissions).toEqual(["anything"]);
  });

  it("is a ConfigError with a readable message", () => {
    const parse = () => parseMapping("rules: []\n", "config/mapping.yaml");
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(MappingError);
    expect(parse).toThrow(/^Mapping file is invalid \(1 problem\):\n  - config\/mapping.yaml:1:1: /);
    const error = captureError(parse);
    expect(error).toBeInstanceOf(MappingError);
    expect((error as MappingError).mappingProblems[0]).toMatchObject({
      source: "config/mapping.yaml",
      line: 1,
      column: 1,
    });
  });
});

describe("mappingHash", () => {
  it("ignores comments, formatting and key order", () => {
    const a = parseMapping(VALID);
    const b = parseMapping(
      `# comment\nrules:\n${VALID.split("rules:\n")[1]}department: {allowed: [agency, bi, c_suite, engineering, finance, marketing, pm], translate: { "Finance & Accounting": finance }, fromAttribute: true, default: engineering}\n`,
    );
    expect(mappingHash(a)).toBe(mappingHash(b));
  });

  it("changes when a permission changes", () => {
    const a = parseMapping(VALID);
    const b = parseMapping(VALID.replace("[export_user_data]", "[export_user_data, view_pii]"));
    expect(mappingHash(a)).not.toBe(mappingHash(b));
  });
});

describe("didYouMean", () => {
  it.each([
    ["workspace", ["workspaces", "name"], "workspaces"],
    ["Group", ["group", "groups"], "group"],
    ["permisions", ["permissions"], "permissions"],
    ["zzz", ["department", "rules"], undefined],
  ] as const)("%s → %s", (given, candidates, expected) => {
    expect(didYouMean(given, candidates)).toBe(expected);
  });
});

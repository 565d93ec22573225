import type { GroupPattern } from "./groupPattern.js";
import type { Equivalents } from "./granular.js";
import type { MappingProblem } from "./problems.js";
import type { MappingVocabulary, PermissionModel } from "../vocabulary/permissions.js";

/**
 * What `parseMapping` (./file.ts) makes of a mapping file: the rules, the catalogue's entries (each
 * compiled to a rule, ./catalogue.ts) and the file's policies. Types only, apart from the parser so
 * that the catalogue and the parser both read them without importing each other.
 */

/**
 * Workspaces, teams, permission sets and roles are referred to by a key: their name, or
 * `id:<identifier>` when the file gives their API identifier (what is then sent, and what
 * survives a rename on the platform). `refKey` and `platformRef` (src/platform/scim.ts) convert.
 */
type MappingTeam = { name: string; permissions: string[] };
type MappingWorkspace = { name: string; permissions: string[]; permissionSets: string[]; teams: MappingTeam[] };

export type MappingRule = {
  /** 0-based position in the file; rules are applied in this order. */
  index: number;
  /** 1-based line of the rule in the file, for messages and the admin UI. */
  line: number;
  description?: string;
  /** Group displayNames (from `group` and `groups`), matched case-insensitively. */
  groups: string[];
  groupExternalId?: string;
  /** Compiled case-insensitively, like `group` (IdPs do not keep the case of names stable), and time-limited (groupPattern.ts). */
  groupPattern?: GroupPattern;
  department?: string;
  companyPermissions: string[];
  /** Company-level roles, by key (`refKey`). */
  roles: string[];
  workspaces: MappingWorkspace[];
};

export type DepartmentPolicy = {
  default: string;
  fromAttribute: boolean;
  translate: Record<string, string>;
  allowed?: string[];
};

export type Mapping = {
  /** The file name the mapping came from (for messages). */
  source: string;
  department: DepartmentPolicy;
  rules: MappingRule[];
  /** null when the file turned the vocabulary check off. */
  vocabulary: MappingVocabulary | null;
  /** The permission model the rules speak (declared, or inferred: legacy when any legacy-only string is used). */
  permissionModel: PermissionModel;
  /** `vocabulary.equivalents`: the operator's granular strings for what the platform names by display name only. */
  equivalents: Equivalents;
  /** What the IdP may assign as a user's roles[] or entitlements[]; empty without `catalogue:`. */
  catalogue: Catalogue;
  /** What loads but deserves attention (legacy strings and their granular equivalents), with lines. */
  warnings: MappingProblem[];
  /** The template's note when the file is a placeholder (`placeholder:`), refused in production. */
  placeholder?: { note: string; line: number };
  /** Stable over formatting, comments and key order; changes when the meaning may change. */
  hash: string;
};

/** What an entry grants on the platform; `role` entries are published at /Roles, the others at /Entitlements. */
export type CatalogueType = "role" | "permissionSet" | "team" | "workspacePermissions";

/** The attribute of the SCIM user that carries an assignment. */
export type AssignedAttribute = "roles" | "entitlements";

/** One value the IdP assigned to a user, as stored on the user. */
export type Assignment = { attribute: AssignedAttribute; value: string };

export type CatalogueEntry = {
  id: string;
  displayName: string;
  type: CatalogueType;
  description: string | null;
  /** 1-based line of the entry in the file. */
  line: number;
  /** The grants, in a rule's terms (no group matchers; `index` is the entry's position after the rules). */
  rule: MappingRule;
};

export type Catalogue = {
  /** The IdP's name as the log and the views say it ("assigned role Marketer in Okta"). */
  assignedIn: string;
  entries: CatalogueEntry[];
};

/**
 * The platform's Security Event record as the connector keeps it: the events its dashboard and API
 * report (the manual "Security Event Download" and the daily S3 export, docs/platform-record.md),
 * each read into one `PlatformEvent`. The report names events in words ("Added Account"); `kind`
 * is the connector's word for what such an event means to it. Names it does not know are kept as
 * `other` (content events: campaigns, segments, API keys) and change nothing.
 */
export type PlatformEventKind =
  | "account-added"
  | "account-updated"
  | "permissions-changed"
  | "account-removed"
  | "suspended"
  | "unsuspended"
  | "signed-in"
  | "failed-login"
  | "role-changed"
  | "permission-set-changed"
  | "team-changed"
  | "other";

/**
 * The event names the platform documents, lower-cased, and what each means here. Names are matched
 * case-insensitively and with runs of spaces folded; any other name is `other`.
 */
const EVENT_KINDS: Readonly<Record<string, PlatformEventKind>> = {
  "added account": "account-added",
  "added additional developer": "account-added",
  "developer updated": "account-updated",
  "updated account permission": "permissions-changed",
  "removed account": "account-removed",
  "removed developer": "account-removed",
  "developer suspended": "suspended",
  "developer unsuspended": "unsuspended",
  "signed in": "signed-in",
  "failed login": "failed-login",
  "created custom role": "role-changed",
  "updated custom role": "role-changed",
  "deleted custom role": "role-changed",
  "created app group permission set": "permission-set-changed",
  "edited app group permission set": "permission-set-changed",
  "removed app group permission set": "permission-set-changed",
  "added team": "team-changed",
  "edited team": "team-changed",
  "archived team": "team-changed",
};

/** The kind of a report's event name ("Added Account" → account-added). */
export function eventKind(name: string): PlatformEventKind {
  return EVENT_KINDS[name.trim().replace(/\s+/g, " ").toLowerCase()] ?? "other";
}

/** One row of the report, as read and normalised (times in UTC, the account lower-cased). */
export type PlatformEvent = {
  at: Date;
  /** Who did it: a dashboard user's email, or whatever the platform writes for its API. */
  actor: string;
  /** The event's name as the report wrote it. */
  event: string;
  kind: PlatformEventKind;
  /** The affected account's email (lower-cased), or null when the event names none. */
  account: string | null;
  ip: string | null;
  /** Free text the report carries beside the event (a role's, a set's or a team's name). */
  details: string | null;
};

/**
 * What the connector made of the events an import brought (src/platformRecord/findings.ts), counted:
 * its own writes (never flagged), accounts that may have been made by hand (to confirm by one lookup),
 * changes to managed accounts made outside it, accounts removed by hand, sign-in and suspension
 * facts, edits of roles, permission sets and teams, and events that change nothing.
 */
export type Findings = {
  ownWrites: number;
  candidates: number;
  outsideChanges: number;
  removedByHand: number;
  activity: number;
  catalogueEdits: number;
  ignored: number;
};

import { isIP } from "node:net";
import { SCIM_USER_SCHEMA } from "./userInput.js";
import { parseDashboardUser, type DashboardUser, type DashboardUserInput } from "./users.js";
import { badRequest, EmulatorHttpError, restError } from "../http.js";
import type { EmulatorState } from "../state.js";
import { isEmail, oneOf, requiredString } from "../validation.js";

/**
 * What a person does in the platform's dashboard, as `POST /_emulator/dashboard` plays it: the
 * change to the platform's state, and the security event the platform records for it. The
 * platform has no API for any of these; the request shape is the emulator's own.
 */

const ACCOUNT_EVENTS = {
  "add-account": "Added Account",
  "update-permissions": "Updated Account Permission",
  "remove-account": "Removed Account",
  suspend: "Developer Suspended",
  unsuspend: "Developer Unsuspended",
  "sign-in": "Signed In",
  "failed-login": "Failed Login",
} as const;

const DIRECTORY_EVENTS = {
  "edit-role": "Updated Custom Role",
  "edit-permission-set": "Edited App Group Permission Set",
  "edit-team": "Edited Team",
} as const;

type AccountAction = keyof typeof ACCOUNT_EVENTS;
type DirectoryAction = keyof typeof DIRECTORY_EVENTS;
const DASHBOARD_ACTIONS = [
  ...(Object.keys(ACCOUNT_EVENTS) as AccountAction[]),
  ...(Object.keys(DIRECTORY_EVENTS) as DirectoryAction[]),
];

export type DashboardAction = { actor: string; ip: string | null } & (
  { action: AccountAction; email: string; body: Record<string, unknown> } | { action: DirectoryAction; name: string }
);

const isDirectoryAction = (action: string): action is DirectoryAction => Object.hasOwn(DIRECTORY_EVENTS, action);

/** The request body as an action, or a 400 naming the first problem. `remoteIp` stands in for a missing `ip`. */
export function parseDashboardAction(body: Record<string, unknown>, remoteIp: string | null): DashboardAction {
  const action = oneOf(body.action, "action", DASHBOARD_ACTIONS);
  const actor = requiredString(body.actor, "actor");
  if (body.ip !== undefined && (typeof body.ip !== "string" || isIP(body.ip) === 0))
    throw badRequest("ip must be an IPv4 or IPv6 address");
  const ip = (body.ip as string | undefined) ?? remoteIp;
  if (isDirectoryAction(action)) return { action, actor, ip, name: requiredString(body.name, "name") };
  const email = requiredString(body.email, "email");
  if (!isEmail(email)) throw badRequest("email must be an email address");
  return { action, actor, ip, email, body };
}

/** Applies the action to the state and records its event; the account created, for add-account. */
export function applyDashboardAction(state: EmulatorState, a: DashboardAction): DashboardUser | undefined {
  if ("name" in a) {
    state.recordSecurityEvent({
      actor: a.actor,
      event: DIRECTORY_EVENTS[a.action],
      account: null,
      ip: a.ip,
      details: a.name,
    });
    return undefined;
  }
  const users = state.dashboardUsers;
  const record = (account: string) =>
    state.recordSecurityEvent({ actor: a.actor, event: ACCOUNT_EVENTS[a.action], account, ip: a.ip, details: null });
  if (a.action === "add-account") {
    const created = grantsChecked(() => users.create(accountInput(state, a.email, a.body), state.clock.now()));
    if (!created) throw restError(409, `A dashboard user "${a.email}" exists already`);
    record(created.userName);
    return created;
  }
  const existing = users.findByUserName(a.email);
  if (!existing) throw restError(404, `No dashboard user "${a.email}"`);
  if (a.action === "update-permissions") {
    if (a.body.permissions === undefined) throw badRequest("permissions is required for update-permissions");
    const input = parsed(state, { ...existing, permissions: a.body.permissions });
    grantsChecked(() => users.replace(existing, input));
  } else if (a.action === "remove-account") users.delete(existing.id);
  else if (a.action === "suspend" || a.action === "unsuspend") users.setSuspended(existing.id, a.action === "suspend");
  else if (a.action === "sign-in") users.signedIn(existing.id, state.clock.now());
  record(existing.userName);
  return undefined;
}

/** An account made in the dashboard: the name and department default to the email's local part and "Dashboard". */
function accountInput(state: EmulatorState, email: string, body: Record<string, unknown>): DashboardUserInput {
  return parsed(state, {
    userName: email,
    name: body.name ?? { givenName: email.split("@")[0], familyName: "" },
    department: body.department ?? "Dashboard",
    permissions: body.permissions ?? {},
  });
}

/** The SCIM API's own validation of a dashboard user, its problem as a 400. */
function parsed(state: EmulatorState, fields: Record<string, unknown>): DashboardUserInput {
  const result = parseDashboardUser({ schemas: [SCIM_USER_SCHEMA], ...fields }, state.dashboardUsers.model.model);
  if (!result.ok) throw badRequest(result.detail);
  return result.value;
}

/** Grants that do not resolve (an unknown role, a legacy string refused) answer the SCIM API's detail as a plain 400. */
function grantsChecked<T>(write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (error instanceof EmulatorHttpError && error.status === 400) {
      const detail = (error.body as { detail?: unknown }).detail;
      throw badRequest(typeof detail === "string" ? detail : error.message);
    }
    throw error;
  }
}

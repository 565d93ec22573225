import { rateLimit, requirePermission } from "../pipeline/auth.js";
import { badRequest, bodyObject, sendJson } from "../http.js";
import type { SubscriptionState } from "../engagement/profiles.js";
import { RATE_LIMITS } from "../pipeline/rateLimits.js";
import { reportedState, setGroupState } from "../engagement/subscriptions.js";
import { emailList, oneOf, phoneList, requiredString, stringList } from "../validation.js";
import type { RouteContext } from "./context.js";

/** Subscription groups: the bulk v2 setter, the single-group v1 setter and the status reader. */

const BOTH_EMAIL_AND_PHONE = "Either an email address or a phone number should be provided, but not both.";
const GROUP_STATES: readonly SubscriptionState[] = ["subscribed", "unsubscribed"];
const MAX_GROUP_ENTRIES = 50;

/** A repeatable query parameter: `name`, `name[]`, comma-free; string or array. */
function queryValues(query: Record<string, unknown>, name: string): unknown {
  const plain = query[name];
  const bracketed = query[`${name}[]`];
  if (plain === undefined) return bracketed;
  if (bracketed === undefined) return plain;
  return [...[plain].flat(), ...[bracketed].flat()];
}

export function subscriptionRoutes({ state, auth, route }: RouteContext): void {
  const setGuard = [requirePermission(auth, "subscription.status.set"), rateLimit(state, RATE_LIMITS.subscriptionSet)];

  route("post", "/v2/subscription/status/set", "/v2/subscription/status/set", ...setGuard, (req, res) => {
    const groups = bodyObject(req).subscription_groups;
    if (!Array.isArray(groups) || groups.length === 0)
      throw badRequest("subscription_groups must be a non-empty array");
    if (groups.length > MAX_GROUP_ENTRIES)
      throw badRequest(`subscription_groups may hold at most ${MAX_GROUP_ENTRIES} entries`);
    // Validate every entry before applying any, so a 400 changes nothing.
    const parsed = groups.map((entry: unknown, i: number) => {
      if (typeof entry !== "object" || entry === null) throw badRequest(`subscription_groups[${i}] must be an object`);
      const e = entry as Record<string, unknown>;
      const at = `subscription_groups[${i}]`;
      const groupId = requiredString(e.subscription_group_id, `${at}.subscription_group_id`);
      const groupState = oneOf(e.subscription_state, `${at}.subscription_state`, GROUP_STATES);
      if (e.emails !== undefined && e.phones !== undefined)
        throw badRequest(`${at}: emails and phones cannot both be included`);
      const externalIds = stringList(e.external_ids, `${at}.external_ids`, { required: false });
      const emails = emailList(e.emails, `${at}.emails`, false);
      const phones = phoneList(e.phones, `${at}.phones`, false);
      if (!externalIds && !emails && !phones) throw badRequest(`${at} requires one of external_ids, emails, phones`);
      return { groupId, groupState, targets: { externalIds, emails, phones } };
    });
    for (const p of parsed) setGroupState(state.profiles, p.groupId, p.groupState, p.targets);
    sendJson(res, 200, { message: "success" });
  });

  route("post", "/subscription/status/set", "/subscription/status/set", ...setGuard, (req, res) => {
    const body = bodyObject(req);
    const groupId = requiredString(body.subscription_group_id, "subscription_group_id");
    const groupState = oneOf(body.subscription_state, "subscription_state", GROUP_STATES);
    if (body.email !== undefined && body.phone !== undefined) throw badRequest(BOTH_EMAIL_AND_PHONE);
    const externalIds = stringList(body.external_id, "external_id", { required: false });
    const emails = emailList(body.email, "email", false);
    const phones = phoneList(body.phone, "phone", false);
    if (!externalIds && !emails && !phones) throw badRequest("external_id, email or phone is required");
    setGroupState(state.profiles, groupId, groupState, { externalIds, emails, phones });
    sendJson(res, 201, { message: "success" });
  });

  route(
    "get",
    "/subscription/status/get",
    "/subscription/status/get",
    requirePermission(auth, "subscription.status.get"),
    rateLimit(state, RATE_LIMITS.subscriptionGet),
    (req, res) => {
      const query = req.query as Record<string, unknown>;
      const groupId = requiredString(query.subscription_group_id, "subscription_group_id");
      const externalIds = stringList(queryValues(query, "external_id"), "external_id", { required: false });
      const rawEmail = queryValues(query, "email");
      const rawPhone = queryValues(query, "phone");
      if (rawEmail !== undefined && rawPhone !== undefined) throw badRequest(BOTH_EMAIL_AND_PHONE);
      const status: Record<string, string> = {};
      if (externalIds) {
        // external_id wins when sent together with email or phone.
        for (const id of externalIds) status[id] = reportedState(state.profiles.byExternal(id), groupId);
      } else if (rawEmail !== undefined) {
        for (const email of emailList(rawEmail, "email", true)!)
          status[email] = reportedState(state.profiles.pickByEmail(email), groupId);
      } else if (rawPhone !== undefined) {
        for (const phone of phoneList(rawPhone, "phone", true)!)
          status[phone] = reportedState(state.profiles.pickByPhone(phone), groupId);
      } else {
        throw badRequest("one of external_id, email or phone is required");
      }
      sendJson(res, 200, { status, message: "success" });
    },
  );
}

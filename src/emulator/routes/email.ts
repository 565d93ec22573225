import { rateLimit, requirePermission } from "../pipeline/auth.js";
import { bodyObject, sendJson } from "../http.js";
import type { EmailSubscriptionState } from "../engagement/profiles.js";
import { RATE_LIMITS } from "../pipeline/rateLimits.js";
import { emailList, oneOf } from "../validation.js";
import type { RouteContext } from "./context.js";

/**
 * Email subscription states and the deliverability lists. Addresses are matched
 * case-insensitively; a state uploaded for an address no profile has yet is remembered and applied
 * when a profile with that address appears (see ProfileStore.setEmail).
 */

const EMAIL_STATES: readonly EmailSubscriptionState[] = ["subscribed", "unsubscribed", "opted_in"];

export function emailRoutes({ state, auth, route }: RouteContext): void {
  route(
    "post",
    "/email/status",
    "/email/status",
    requirePermission(auth, "email.status"),
    rateLimit(state, RATE_LIMITS.emailStatus),
    (req, res) => {
      const body = bodyObject(req);
      const emails = emailList(body.email, "email", true)!;
      const subscriptionState = oneOf(body.subscription_state, "subscription_state", EMAIL_STATES);
      for (const email of emails) state.profiles.setEmailState(email, subscriptionState);
      sendJson(res, 200, { message: "success" });
    },
  );

  // Same function; /email/blocklist is the recommended name. One permission and one rate bucket.
  for (const path of ["/email/blacklist", "/email/blocklist"]) {
    route(
      "post",
      path,
      path,
      requirePermission(auth, "email.blacklist"),
      rateLimit(state, RATE_LIMITS.emailBlocklist),
      (req, res) => {
        for (const email of emailList(bodyObject(req).email, "email", true)!) state.hardBounces.add(email);
        sendJson(res, 200, { message: "success" });
      },
    );
  }

  route(
    "post",
    "/email/bounce/remove",
    "/email/bounce/remove",
    requirePermission(auth, "email.bounce.remove"),
    rateLimit(state, RATE_LIMITS.emailBounceRemove),
    (req, res) => {
      for (const email of emailList(bodyObject(req).email, "email", true)!) state.hardBounces.delete(email);
      sendJson(res, 200, { message: "success" });
    },
  );

  route(
    "post",
    "/email/spam/remove",
    "/email/spam/remove",
    requirePermission(auth, "email.spam.remove"),
    rateLimit(state, RATE_LIMITS.emailSpamRemove),
    (req, res) => {
      for (const email of emailList(bodyObject(req).email, "email", true)!) state.spam.delete(email);
      sendJson(res, 200, { message: "success" });
    },
  );
}

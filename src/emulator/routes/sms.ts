import { rateLimit, requirePermission } from "../pipeline/auth.js";
import { bodyObject, sendJson } from "../http.js";
import { parseInvalidPhoneQuery, selectInvalidPhones } from "../engagement/invalidPhones.js";
import { RATE_LIMITS } from "../pipeline/rateLimits.js";
import { phoneList } from "../validation.js";
import type { RouteContext } from "./context.js";

/** The invalid SMS phone number list: read with a date range and paging, and removal. */

export function smsRoutes({ state, auth, route }: RouteContext): void {
  route(
    "get",
    "/sms/invalid_phone_numbers",
    "/sms/invalid_phone_numbers",
    requirePermission(auth, "sms.invalid_phone_numbers"),
    rateLimit(state, RATE_LIMITS.smsInvalidList),
    (req, res) => {
      const query = parseInvalidPhoneQuery(req.query as Record<string, unknown>);
      sendJson(res, 200, { sms: selectInvalidPhones(state.invalidPhones.values(), query), message: "success" });
    },
  );

  route(
    "post",
    "/sms/invalid_phone_numbers/remove",
    "/sms/invalid_phone_numbers/remove",
    requirePermission(auth, "sms.invalid_phone_numbers.remove"),
    rateLimit(state, RATE_LIMITS.smsInvalidRemove),
    (req, res) => {
      const body = bodyObject(req);
      // The body shape names it phone_numbers, the parameter table phone_number: accept both.
      const field = body.phone_numbers !== undefined ? "phone_numbers" : "phone_number";
      for (const phone of phoneList(body[field], field, true)!) state.invalidPhones.delete(phone);
      sendJson(res, 200, { message: "success" });
    },
  );
}

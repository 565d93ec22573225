import { rateLimit, requirePermission } from "../pipeline/auth.js";
import { badRequest, bodyObject, sendJson } from "../http.js";
import { RATE_LIMITS } from "../pipeline/rateLimits.js";
import { trackUsers } from "../engagement/track.js";
import { aliasProblem, MAX_IDS_PER_REQUEST, requiredString, type UserAlias } from "../validation.js";
import type { RouteContext } from "./context.js";

/** `/users/track`, `/users/alias/new`, `/users/alias/update` and `/users/delete`. */

function boundedArray(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value) || value.length === 0)
    throw badRequest(`${field} is required and must be a non-empty array`);
  if (value.length > MAX_IDS_PER_REQUEST) throw badRequest(`${field} may hold at most ${MAX_IDS_PER_REQUEST} entries`);
  return value;
}

const DELETE_KINDS = ["external_ids", "user_aliases", "platform_ids"] as const;

export function userRoutes({ state, auth, route }: RouteContext): void {
  const profiles = state.profiles;

  route(
    "post",
    "/users/track",
    "/users/track",
    requirePermission(auth, "users.track"),
    rateLimit(state, RATE_LIMITS.usersTrack),
    (req, res) => {
      sendJson(res, 201, trackUsers(profiles, req.body ?? {}));
    },
  );

  const identityLimit = rateLimit(state, RATE_LIMITS.usersIdentity);

  route(
    "post",
    "/users/alias/new",
    "/users/alias/new",
    requirePermission(auth, "users.alias.new"),
    identityLimit,
    (req, res) => {
      const entries = boundedArray(bodyObject(req).user_aliases, "user_aliases").map((entry, i) => {
        const problem = aliasProblem(entry);
        if (problem) throw badRequest(`user_aliases[${i}]: ${problem}`);
        const e = entry as UserAlias & { external_id?: unknown };
        if (e.external_id !== undefined && (typeof e.external_id !== "string" || e.external_id === ""))
          throw badRequest(`user_aliases[${i}].external_id must be a non-empty string`);
        return {
          alias: { alias_name: e.alias_name, alias_label: e.alias_label },
          externalId: e.external_id as string | undefined,
        };
      });
      for (const { alias, externalId } of entries) {
        if (externalId !== undefined) {
          // With an external_id that no user has, the alias is added to no user.
          const profile = profiles.byExternal(externalId);
          if (profile && profiles.addAlias(profile, alias)) profiles.touch(profile);
        } else if (!profiles.byUserAlias(alias)) {
          profiles.create({ alias });
        }
      }
      sendJson(res, 201, { aliases_processed: entries.length, message: "success" });
    },
  );

  route(
    "post",
    "/users/alias/update",
    "/users/alias/update",
    requirePermission(auth, "users.alias.update"),
    identityLimit,
    (req, res) => {
      const updates = boundedArray(bodyObject(req).alias_updates, "alias_updates").map((entry, i) => {
        const e = (entry ?? {}) as Record<string, unknown>;
        return {
          label: requiredString(e.alias_label, `alias_updates[${i}].alias_label`),
          oldName: requiredString(e.old_alias_name, `alias_updates[${i}].old_alias_name`),
          newName: requiredString(e.new_alias_name, `alias_updates[${i}].new_alias_name`),
        };
      });
      // No alias with that label and old name: nothing is updated.
      for (const u of updates) profiles.renameAlias(u.label, u.oldName, u.newName);
      sendJson(res, 201, { aliases_processed: updates.length, message: "success" });
    },
  );

  route(
    "post",
    "/users/delete",
    "/users/delete",
    requirePermission(auth, "users.delete"),
    identityLimit,
    (req, res) => {
      const body = bodyObject(req);
      const kinds = DELETE_KINDS.filter((k) => body[k] !== undefined);
      if (kinds.length === 0) throw badRequest("one of external_ids, user_aliases or platform_ids is required");
      if (kinds.length > 1)
        throw badRequest("only one of external_ids, user_aliases or platform_ids may be sent in a request");
      const kind = kinds[0]!;
      const list = boundedArray(body[kind], kind);
      const targets = list.map((item, i) => {
        if (kind === "user_aliases") {
          const problem = aliasProblem(item);
          if (problem) throw badRequest(`user_aliases[${i}]: ${problem}`);
          return profiles.byUserAlias(item as UserAlias);
        }
        if (typeof item !== "string" || item === "") throw badRequest(`${kind}[${i}] must be a non-empty string`);
        return kind === "external_ids" ? profiles.byExternal(item) : profiles.byPlatformId(item);
      });
      for (const profile of targets) if (profile) profiles.delete(profile);
      sendJson(res, 202, { deleted: list.length, message: "success" });
    },
  );
}

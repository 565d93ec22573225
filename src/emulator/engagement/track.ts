import { EmulatorHttpError } from "../http.js";
import type { Profile, ProfileStore } from "./profiles.js";
import {
  BLACKLISTED_MESSAGE,
  isBlacklistedExternalId,
  validateAttributes,
  validateEvent,
  validatePurchase,
  type AttributeChanges,
  type Identity,
  type InputArray,
  type Validated,
} from "./trackRules.js";
import { MAX_TRACK_OBJECTS } from "../validation.js";

/**
 * `POST /users/track`: fatal problems (shape, more than 75 objects in an array, a blacklisted
 * external_id) reject the whole request; a problem with one object is a non-fatal error and the
 * other objects are processed. Events are never deduplicated.
 */

type TrackError = { type: string; input_array: InputArray; index: number };
export type TrackResult = {
  message: "success";
  attributes_processed?: number;
  events_processed?: number;
  purchases_processed?: number;
  errors?: TrackError[];
};

function fatal(message: string): EmulatorHttpError {
  return new EmulatorHttpError(400, { message, errors: [message] });
}

/** Finds the user an object names, creating one where the document says a profile is created. */
function resolveProfile(
  profiles: ProfileStore,
  identity: Identity,
  updateOnly: boolean | undefined,
): Profile | undefined {
  switch (identity.kind) {
    case "external_id":
      return (
        profiles.byExternal(identity.value) ??
        (updateOnly === true ? undefined : profiles.create({ externalId: identity.value }))
      );
    case "user_alias":
      // Update-only is always on for an alias, unless `_update_existing_only: false` asks for an alias-only profile.
      return (
        profiles.byUserAlias(identity.value) ??
        (updateOnly === false ? profiles.create({ alias: identity.value }) : undefined)
      );
    case "platform_id":
      return profiles.byPlatformId(identity.value);
    case "email":
      // No profile has the address: a new email-only profile (no alias).
      return (
        profiles.pickByEmail(identity.value) ??
        (updateOnly === true ? undefined : profiles.create({ email: identity.value }))
      );
    case "phone":
      return (
        profiles.pickByPhone(identity.value) ??
        (updateOnly === true ? undefined : profiles.create({ phone: identity.value }))
      );
  }
}

function applyAttributes(profiles: ProfileStore, profile: Profile, changes: AttributeChanges): void {
  if (changes.email !== undefined) profiles.setEmail(profile, changes.email);
  if (changes.phone !== undefined) profiles.setPhone(profile, changes.phone);
  if (changes.emailSubscribe !== undefined) profile.emailSubscribe = changes.emailSubscribe;
  for (const [name, value] of Object.entries(changes.custom)) {
    if (value === null) delete profile.attributes[name];
    else profile.attributes[name] = value;
  }
  // Subscription state set through /users/track updates every user sharing the email address.
  const sharing = profile.email !== undefined ? profiles.allWithEmail(profile.email) : [profile];
  for (const group of changes.groups) {
    for (const p of sharing.includes(profile) ? sharing : [...sharing, profile]) {
      p.subscriptionGroups.set(group.id, group.state);
      if (p !== profile) profiles.touch(p);
    }
  }
  profiles.touch(profile);
}

function arrayOf(body: Record<string, unknown>, name: InputArray): unknown[] | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw fatal(`${name} must be an array`);
  if (value.length > MAX_TRACK_OBJECTS) throw fatal(`${name} may hold at most ${MAX_TRACK_OBJECTS} objects`);
  return value;
}

export function trackUsers(profiles: ProfileStore, body: unknown): TrackResult {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw fatal("Request body must be a JSON object");
  const b = body as Record<string, unknown>;
  const arrays = {
    attributes: arrayOf(b, "attributes"),
    events: arrayOf(b, "events"),
    purchases: arrayOf(b, "purchases"),
  };
  if (!arrays.attributes && !arrays.events && !arrays.purchases)
    throw fatal("attributes, events or purchases is required");
  for (const list of Object.values(arrays)) {
    for (const item of list ?? []) {
      if (item && typeof item === "object" && isBlacklistedExternalId((item as Record<string, unknown>).external_id))
        throw fatal(BLACKLISTED_MESSAGE);
    }
  }

  const errors: TrackError[] = [];
  const result: TrackResult = { message: "success" };
  const run = <T>(
    name: InputArray,
    list: unknown[] | undefined,
    validate: (o: unknown) => Validated<T>,
    apply: (p: Profile, data: T) => void,
  ) => {
    if (!list) return;
    let processed = 0;
    list.forEach((item, index) => {
      const v = validate(item);
      if (!v.ok) {
        errors.push({ type: v.problem, input_array: name, index });
        return;
      }
      processed += 1;
      const profile = resolveProfile(profiles, v.identity, v.updateOnly);
      if (profile) apply(profile, v.data);
    });
    result[`${name}_processed`] = processed;
  };
  run("attributes", arrays.attributes, validateAttributes, (p, changes) => applyAttributes(profiles, p, changes));
  run("events", arrays.events, validateEvent, (p) => {
    p.eventCount += 1;
    profiles.touch(p);
  });
  run("purchases", arrays.purchases, validatePurchase, (p) => {
    p.purchaseCount += 1;
    profiles.touch(p);
  });
  if (errors.length) result.errors = errors;
  return result;
}

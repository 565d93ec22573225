import { randomBytes } from "node:crypto";
import type { UserAlias } from "../validation.js";

/**
 * User profiles of the engagement side (`/users/*`, subscriptions, email states) with O(1)
 * indexes by platform id, external id, email, phone and alias. "Most recently updated" is a
 * global sequence number bumped on every change, so the document's tie-break rules are exact.
 */

export type SubscriptionState = "subscribed" | "unsubscribed";
export type EmailSubscriptionState = "subscribed" | "unsubscribed" | "opted_in";

export type Profile = {
  platformId: string;
  externalId?: string;
  email?: string;
  phone?: string;
  aliases: UserAlias[];
  attributes: Record<string, unknown>;
  emailSubscribe?: EmailSubscriptionState;
  subscriptionGroups: Map<string, SubscriptionState>;
  eventCount: number;
  purchaseCount: number;
  updatedSeq: number;
};

const aliasKey = (alias: UserAlias) => `${alias.alias_label}\u0000${alias.alias_name}`;

function addToSetIndex(index: Map<string, Set<Profile>>, key: string, profile: Profile): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(profile);
}

function removeFromSetIndex(index: Map<string, Set<Profile>>, key: string | undefined, profile: Profile): void {
  if (key === undefined) return;
  const set = index.get(key);
  set?.delete(profile);
  if (set && set.size === 0) index.delete(key);
}

export class ProfileStore {
  readonly byId = new Map<string, Profile>();
  private readonly byExternalId = new Map<string, Profile>();
  private readonly byEmail = new Map<string, Set<Profile>>();
  private readonly byPhone = new Map<string, Set<Profile>>();
  private readonly byAlias = new Map<string, Profile>();
  private seq = 0;
  private readonly idPrefix = randomBytes(6).toString("hex");
  private idCounter = 0;

  /** Email subscription states uploaded by `/email/status`, including for addresses no profile has yet. */
  readonly emailStates = new Map<string, EmailSubscriptionState>();

  clear(): void {
    for (const map of [this.byId, this.byExternalId, this.byEmail, this.byPhone, this.byAlias, this.emailStates])
      map.clear();
  }

  create(identity: { externalId?: string; email?: string; phone?: string; alias?: UserAlias }): Profile {
    this.idCounter += 1;
    const profile: Profile = {
      platformId: `${this.idPrefix}${this.idCounter.toString(16).padStart(12, "0")}`,
      aliases: [],
      attributes: {},
      subscriptionGroups: new Map(),
      eventCount: 0,
      purchaseCount: 0,
      updatedSeq: ++this.seq,
    };
    this.byId.set(profile.platformId, profile);
    if (identity.externalId !== undefined) this.setExternalId(profile, identity.externalId);
    if (identity.email !== undefined) this.setEmail(profile, identity.email);
    if (identity.phone !== undefined) this.setPhone(profile, identity.phone);
    if (identity.alias) this.addAlias(profile, identity.alias);
    return profile;
  }

  touch(profile: Profile): void {
    profile.updatedSeq = ++this.seq;
  }

  delete(profile: Profile): void {
    this.byId.delete(profile.platformId);
    if (profile.externalId !== undefined) this.byExternalId.delete(profile.externalId);
    removeFromSetIndex(this.byEmail, profile.email, profile);
    removeFromSetIndex(this.byPhone, profile.phone, profile);
    for (const alias of profile.aliases) this.byAlias.delete(aliasKey(alias));
  }

  byPlatformId(id: string): Profile | undefined {
    return this.byId.get(id);
  }

  byExternal(externalId: string): Profile | undefined {
    return this.byExternalId.get(externalId);
  }

  byUserAlias(alias: UserAlias): Profile | undefined {
    return this.byAlias.get(aliasKey(alias));
  }

  allWithEmail(email: string): Profile[] {
    return [...(this.byEmail.get(email) ?? [])];
  }

  allWithPhone(phone: string): Profile[] {
    return [...(this.byPhone.get(phone) ?? [])];
  }

  /** Rule 1 of /users/track: prefer profiles with an external id, then the most recently updated. */
  pickByEmail(email: string): Profile | undefined {
    return pickMostRecent(this.byEmail.get(email));
  }

  pickByPhone(phone: string): Profile | undefined {
    return pickMostRecent(this.byPhone.get(phone));
  }

  setExternalId(profile: Profile, externalId: string): void {
    if (profile.externalId !== undefined) this.byExternalId.delete(profile.externalId);
    profile.externalId = externalId;
    this.byExternalId.set(externalId, profile);
  }

  /** Sets the address and applies a state `/email/status` uploaded for it earlier. */
  setEmail(profile: Profile, email: string): void {
    removeFromSetIndex(this.byEmail, profile.email, profile);
    profile.email = email;
    addToSetIndex(this.byEmail, email, profile);
    const uploaded = this.emailStates.get(email);
    if (uploaded) profile.emailSubscribe = uploaded;
  }

  setPhone(profile: Profile, phone: string): void {
    removeFromSetIndex(this.byPhone, profile.phone, profile);
    profile.phone = phone;
    addToSetIndex(this.byPhone, phone, profile);
  }

  /** False when the alias already belongs to a profile (aliases are unique per label). */
  addAlias(profile: Profile, alias: UserAlias): boolean {
    const key = aliasKey(alias);
    if (this.byAlias.has(key)) return false;
    profile.aliases.push({ alias_name: alias.alias_name, alias_label: alias.alias_label });
    this.byAlias.set(key, profile);
    return true;
  }

  /** Renames an alias; false when no alias has that label and old name, or the new name is taken. */
  renameAlias(label: string, oldName: string, newName: string): boolean {
    const oldKey = aliasKey({ alias_label: label, alias_name: oldName });
    const newKey = aliasKey({ alias_label: label, alias_name: newName });
    const profile = this.byAlias.get(oldKey);
    if (!profile || (this.byAlias.has(newKey) && oldKey !== newKey)) return false;
    const alias = profile.aliases.find((a) => a.alias_label === label && a.alias_name === oldName)!;
    alias.alias_name = newName;
    this.byAlias.delete(oldKey);
    this.byAlias.set(newKey, profile);
    this.touch(profile);
    return true;
  }

  /** Records an uploaded email state and applies it to every profile with the address. */
  setEmailState(email: string, state: EmailSubscriptionState): void {
    this.emailStates.set(email, state);
    for (const profile of this.byEmail.get(email) ?? []) {
      profile.emailSubscribe = state;
      this.touch(profile);
    }
  }
}

function pickMostRecent(candidates: Set<Profile> | undefined): Profile | undefined {
  if (!candidates || candidates.size === 0) return undefined;
  let best: Profile | undefined;
  for (const p of candidates) {
    if (!best) best = p;
    else if ((p.externalId !== undefined) !== (best.externalId !== undefined)) {
      if (p.externalId !== undefined) best = p;
    } else if (p.updatedSeq > best.updatedSeq) best = p;
  }
  return best;
}

/** The JSON form of a profile for `GET /_emulator/state`. */
export function presentProfile(p: Profile) {
  return {
    platform_id: p.platformId,
    external_id: p.externalId ?? null,
    email: p.email ?? null,
    phone: p.phone ?? null,
    user_aliases: p.aliases,
    attributes: p.attributes,
    email_subscribe: p.emailSubscribe ?? null,
    subscription_groups: Object.fromEntries(p.subscriptionGroups),
    event_count: p.eventCount,
    purchase_count: p.purchaseCount,
  };
}

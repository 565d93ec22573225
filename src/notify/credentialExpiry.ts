import type { Database } from "../db/database.js";
import type { NotificationInput } from "../db/notify/notificationRepository.js";
import { OAuthRepository } from "../db/auth/oauthRepository.js";
import { log } from "../logging/logger.js";
import { EVENTS, notify } from "./events.js";

/**
 * Credentials told before they expire (issue 37): a client secret with an expiry gets one
 * `credential.expiring` message when it comes within 14 days of it and one more within 1 day,
 * through the alert channels. Once per credential per threshold: the incident key names both,
 * and the incident is never resolved, so checking again (any replica, any cycle) sends nothing.
 * Bearer tokens do not expire; access tokens are meant to (the IdP takes a new one), so neither
 * is warned about. The SAML certificate has its own message (saml.certificate.expiring).
 */

const DAY_MS = 86_400_000;
/** Largest first: a secret already within a day gets the 1-day message, not a late 14-day one. */
const THRESHOLDS = [
  { name: "14d", ms: 14 * DAY_MS },
  { name: "1d", ms: DAY_MS },
] as const;

export async function checkCredentialExpiry(db: Database, now: Date): Promise<void> {
  const soon = await new OAuthRepository(db).secretsExpiringBefore(now, new Date(now.getTime() + THRESHOLDS[0].ms));
  for (const secret of soon) {
    const left = secret.expiresAt.getTime() - now.getTime();
    const threshold = THRESHOLDS.findLast((t) => left <= t.ms)!;
    const { queued } = await notify(db, credentialExpiring(now, secret, threshold.name));
    if (queued)
      log.warn("notify", "credential expiring", {
        client: secret.clientName,
        secretId: secret.id,
        threshold: threshold.name,
      });
  }
}

function credentialExpiring(
  now: Date,
  secret: { id: string; clientName: string; prefix: string; expiresAt: Date },
  threshold: string,
): NotificationInput {
  const hours = Math.max(0, Math.floor((secret.expiresAt.getTime() - now.getTime()) / 3_600_000));
  const left = hours >= 48 ? `${Math.floor(hours / 24)} days` : `${hours} hours`;
  return {
    key: `credential.expiring:${secret.id}:${threshold}`,
    event: EVENTS.credentialExpiring,
    occurredAt: now,
    summary: `The OAuth client secret ${secret.prefix}… of client "${secret.clientName}" expires in ${left} (${secret.expiresAt.toISOString()}): add a new one (scim-connector token client secret ${secret.clientName}), put it in the IdP, then revoke the old one`,
    details: {
      kind: "client secret",
      client: secret.clientName,
      secretId: secret.id,
      prefix: secret.prefix,
      expiresAt: secret.expiresAt.toISOString(),
      threshold,
    },
    linkPath: "/admin/credentials",
  };
}

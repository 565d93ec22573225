import { X509Certificate } from "node:crypto";
import type { Database } from "../db/database.js";
import type { Clock } from "../clock.js";
import {
  isIncidentOpen,
  lastIdpRequestAt,
  noteIdpRequest,
  type NotificationInput,
} from "../db/notify/notificationRepository.js";
import { log } from "../logging/logger.js";
import { checkCredentialExpiry } from "./credentialExpiry.js";
import { EVENTS, notify, resolve } from "./events.js";

/**
 * Conditions found by looking rather than by a write: the IdP gone quiet, the SAML certificate
 * or an OAuth client secret about to expire. Checked by the deliverer's loop against the injectable clock; every replica
 * may check, the open-incident key keeps it to one message. The IdP's and the certificate's messages
 * are built here; an expiring secret's in credentialExpiry.ts.
 */

const CERT_WARNING_MS = 30 * 86_400_000;
const NOTE_EVERY_MS = 60_000;

export type ConditionChecks = { run(now: Date): Promise<void> };

export function conditionChecks(options: {
  db: Database;
  idpSilenceHours: number;
  samlIdpCert?: string;
}): ConditionChecks {
  const { db, idpSilenceHours } = options;
  const cert = options.samlIdpCert ? readCertificate(options.samlIdpCert) : undefined;
  return {
    async run(now) {
      if (idpSilenceHours > 0) await checkIdpSilence(db, now, idpSilenceHours);
      await checkCredentialExpiry(db, now);
      if (cert && cert.validTo.getTime() - now.getTime() < CERT_WARNING_MS)
        await notify(db, samlCertificateExpiring(now, cert));
    },
  };
}

async function checkIdpSilence(db: Database, now: Date, hours: number): Promise<void> {
  const last = await lastIdpRequestAt(db);
  if (!last) return; // never connected yet: nothing has gone quiet
  if (now.getTime() - last.getTime() > hours * 3_600_000) {
    const { queued } = await notify(db, idpSilent(now, last, hours));
    if (queued) log.warn("notify", "IdP silent", { lastRequestAt: last.toISOString(), hours });
  } else if (await isIncidentOpen(db, "idp.silent")) {
    await db.transaction((tx) => resolve(tx, idpSilentEnded(now, last)));
  }
}

const IDP_SILENT = "idp.silent";

function idpSilent(now: Date, lastRequestAt: Date, hours: number): NotificationInput {
  return {
    key: IDP_SILENT,
    event: EVENTS.idpSilent,
    occurredAt: now,
    summary: `No authenticated SCIM request from the IdP for more than ${hours} hours: is its provisioning off, or its token broken?`,
    details: { lastRequestAt: lastRequestAt.toISOString(), silenceHours: hours },
    linkPath: "/admin",
  };
}

function idpSilentEnded(now: Date, silentSince: Date): NotificationInput {
  return {
    key: IDP_SILENT,
    event: EVENTS.idpSilentEnded,
    occurredAt: now,
    summary: "The IdP is sending SCIM requests again",
    details: { silentSince: silentSince.toISOString() },
    linkPath: "/admin",
  };
}

function samlCertificateExpiring(
  now: Date,
  cert: { fingerprint: string; subject: string; validTo: Date },
): NotificationInput {
  const days = Math.max(0, Math.floor((cert.validTo.getTime() - now.getTime()) / 86_400_000));
  return {
    key: `saml.cert:${cert.fingerprint}`,
    event: EVENTS.samlCertificateExpiring,
    occurredAt: now,
    summary: `The IdP's SAML signing certificate expires in ${days} days (${cert.validTo.toISOString().slice(0, 10)}); admins cannot sign in after that`,
    details: {
      subject: cert.subject,
      fingerprint: cert.fingerprint,
      validTo: cert.validTo.toISOString(),
      daysLeft: days,
    },
  };
}

/** The certificate of SAML_IDP_CERT (PEM, or the bare base64 body many IdPs show); undefined when unreadable. */
export function readCertificate(text: string): { fingerprint: string; subject: string; validTo: Date } | undefined {
  const pem = text.includes("BEGIN CERTIFICATE")
    ? text
    : `-----BEGIN CERTIFICATE-----\n${text.replace(/\s+/g, "")}\n-----END CERTIFICATE-----`;
  try {
    const cert = new X509Certificate(pem);
    return {
      fingerprint: cert.fingerprint256,
      subject: cert.subject.replace(/\n/g, ", "),
      validTo: new Date(cert.validTo),
    };
  } catch {
    return undefined; // the SAML sign-in reports a bad certificate itself
  }
}

/** Called by the SCIM server after authentication: records that the IdP spoke, at most once a minute per process. */
export function idpActivityNoter(db: Database, clock: Clock): () => void {
  let noted = Number.NEGATIVE_INFINITY;
  return () => {
    const now = clock.now();
    if (now.getTime() - noted >= NOTE_EVERY_MS || now.getTime() < noted) {
      noted = now.getTime();
      noteIdpRequest(db, now).catch((error: unknown) => log.warn("notify", "IdP activity not recorded", { error }));
    }
  };
}

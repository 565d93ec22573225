import type { Database } from "../db/database.js";
import type { Clock } from "../clock.js";
import type { Env } from "../config/env.js";
import { enqueueTestNotification, listOutbox, type OutboxEntry } from "../db/notify/notificationRepository.js";
import type { Channel, ChannelName } from "./channels.js";
import { conditionChecks } from "./conditions.js";
import { NotificationDeliverer } from "./deliverer.js";
import { EVENTS } from "./events.js";

export { channelsFromEnv } from "./channels.js";

/**
 * Notifications: events written to the outbox by the code that changes state (events.ts), sent
 * by the deliverer (worker role) to the channels configured by environment (channels.ts).
 */
export type Notifications = {
  channels: Channel[];
  deliverer: NotificationDeliverer;
  /** Queues a test message for one channel; false when that channel is not configured. */
  sendTest(channel: string, actor: string): Promise<boolean>;
  status(): Promise<NotificationsStatus>;
};

/** What the Notifications page and GET /admin/api/notifications show: channels by host only (their URLs carry tokens). */
export type NotificationsStatus = { channels: { name: ChannelName; target: string }[]; outbox: OutboxEntry[] };

export function createNotifications(options: {
  env: Env;
  db: Database;
  clock: Clock;
  publicUrl: string;
  channels: Channel[];
}): Notifications {
  const { env, db, clock, channels } = options;
  const deliverer = new NotificationDeliverer({
    db,
    clock,
    channels,
    publicUrl: options.publicUrl,
    checks: conditionChecks({ db, idpSilenceHours: env.IDP_SILENCE_HOURS, samlIdpCert: env.SAML_IDP_CERT }),
    retentionDays: env.RECONCILE_LOG_RETENTION_DAYS,
    maxAttempts: env.NOTIFY_MAX_ATTEMPTS,
    baseDelayMs: env.NOTIFY_RETRY_BASE_MS,
    leaseMs: env.NOTIFY_LEASE_MS,
  });
  return {
    channels,
    deliverer,
    async sendTest(channel, actor) {
      if (!channels.some((c) => c.name === channel)) return false;
      const now = clock.now();
      await enqueueTestNotification(db, channel, {
        event: EVENTS.test,
        occurredAt: now,
        summary: `Test notification sent by ${actor}`,
        details: { channel, requestedBy: actor },
        linkPath: "/admin/notifications",
      });
      deliverer.notify();
      return true;
    },
    async status() {
      return {
        channels: channels.map((c) => ({ name: c.name, target: c.display })),
        outbox: await listOutbox(db, 100),
      };
    },
  };
}

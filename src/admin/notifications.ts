import { NotFoundError } from "../errors.js";
import type { Notifications } from "../notify/index.js";
import type { AdminActor } from "./actor.js";

/** Channels by host only: their URLs carry tokens (src/notify/channels.ts). */
export type NotificationsData = {
  channels: { name: string; target: string }[];
  outbox: {
    id: string;
    incidentId: string;
    event: string;
    occurredAt: Date | string;
    summary: string;
    deliveries: {
      channel: string;
      state: "pending" | "sent" | "parked";
      attempts: number;
      lastError: string | null;
      sentAt: string | null;
      nextAttemptAt: string;
    }[];
  }[];
};

/** The test button: queues a test message for one configured channel. */
export async function sendTestNotification(
  notifications: Pick<Notifications, "sendTest">,
  channel: string,
  actor: AdminActor,
): Promise<string> {
  if (!(await notifications.sendTest(channel, actor.name)))
    throw new NotFoundError(`No ${channel} channel is configured`);
  return `Test notification queued for ${channel}; the outbox below shows its delivery.`;
}

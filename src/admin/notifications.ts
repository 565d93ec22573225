import { NotFoundError } from "../errors.js";
import type { Notifications, NotificationsStatus } from "../notify/index.js";
import type { AdminActor } from "./adminActor.js";

/** The Notifications page's data: the notifier's own status (src/notify/index.ts). */
export type NotificationsData = NotificationsStatus;

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

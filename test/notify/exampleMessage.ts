import type { NotificationMessage } from "../../src/notify/messages.js";

/** The message docs/alerts/examples/ shows in each channel's shape (messages.unit.test.ts keeps them in step). */
export const EXAMPLE_MESSAGE: NotificationMessage = {
  event: "approval.required",
  id: "6f1c1f0e-4a8e-4d7e-9d59-0c1f5f1b2a3c",
  occurredAt: "2026-11-24T03:12:09.114Z",
  summary: "612 actions held for approval (deprovision)",
  details: { count: 612, kinds: ["deprovision"] },
  url: "https://scim.example.com/admin/approvals",
};

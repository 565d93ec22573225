import { createHmac } from "node:crypto";
import nodemailer from "nodemailer";
import { ConfigError, type Env } from "../config/env.js";
import { registerSecretValue } from "../logging/logger.js";
import { emailContent, slackBody, teamsBody, webhookBody, type NotificationMessage } from "./messages.js";

/**
 * The configured notification channels. A channel's target (a webhook URL carries its token in
 * the path or query; an SMTP URL its password) is a secret: it is registered with the logger's
 * scrubber and only `display` (the host) is ever shown.
 */

export type ChannelName = "webhook" | "slack" | "teams" | "email";

export type Channel = {
  name: ChannelName;
  /** What the UI and API may show: the host, never the path, query or credentials. */
  display: string;
  send(message: NotificationMessage, signal: AbortSignal): Promise<void>;
};

/** A failed send: `retryAfterMs` from the receiver's Retry-After, if it gave one. */
class DeliveryError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "DeliveryError";
  }
}

/** Builds the channels from the environment; a half-configured channel stops the boot with the fix. */
export function channelsFromEnv(env: Env): Channel[] {
  const problems: string[] = [];
  const channels: Channel[] = [];
  if (env.NOTIFY_WEBHOOK_URL) channels.push(webhookChannel(env.NOTIFY_WEBHOOK_URL, env.NOTIFY_WEBHOOK_SECRET));
  else if (env.NOTIFY_WEBHOOK_SECRET)
    problems.push("NOTIFY_WEBHOOK_SECRET: set NOTIFY_WEBHOOK_URL too, or remove the secret");
  if (env.NOTIFY_SLACK_WEBHOOK_URL) channels.push(jsonChannel("slack", env.NOTIFY_SLACK_WEBHOOK_URL, slackBody));
  if (env.NOTIFY_TEAMS_WEBHOOK_URL) channels.push(jsonChannel("teams", env.NOTIFY_TEAMS_WEBHOOK_URL, teamsBody));
  const email = [env.SMTP_URL, env.NOTIFY_EMAIL_TO, env.NOTIFY_EMAIL_FROM];
  if (email.every(Boolean)) channels.push(emailChannel(env.SMTP_URL!, env.NOTIFY_EMAIL_TO!, env.NOTIFY_EMAIL_FROM!));
  else if (email.some(Boolean)) {
    const missing = (["SMTP_URL", "NOTIFY_EMAIL_TO", "NOTIFY_EMAIL_FROM"] as const).filter((name) => !env[name]);
    problems.push(
      ...missing.map(
        (name) =>
          `${name}: required for email notifications (set SMTP_URL, NOTIFY_EMAIL_TO and NOTIFY_EMAIL_FROM together, or none)`,
      ),
    );
  }
  if (problems.length) throw new ConfigError(problems);
  return channels;
}

function hostOf(url: string): string {
  return new URL(url).host;
}

function httpChannel(
  name: ChannelName,
  url: string,
  body: (m: NotificationMessage) => string,
  headers: (raw: string) => Record<string, string>,
): Channel {
  registerSecretValue(url);
  return {
    name,
    display: hostOf(url),
    async send(message, signal) {
      const raw = body(message);
      let response: Response;
      try {
        response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers(raw) },
          body: raw,
          signal,
          redirect: "error",
        });
      } catch (error) {
        // Never the URL (it carries the token): the cause's code or message only.
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        throw new DeliveryError(`request failed: ${cause?.code ?? cause?.message ?? (error as Error).name}`);
      }
      if (response.ok) {
        await response.body?.cancel();
        return;
      }
      const text = (await response.text().catch(() => "")).slice(0, 200).replace(/\s+/g, " ");
      throw new DeliveryError(
        `HTTP ${response.status}${text ? `: ${text}` : ""}`,
        retryAfterMs(response.headers.get("retry-after")),
      );
    },
  };
}

function webhookChannel(url: string, secret: string | undefined): Channel {
  if (secret) registerSecretValue(secret);
  return httpChannel("webhook", url, webhookBody, (raw): Record<string, string> =>
    secret ? { "x-signature": signatureOf(secret, raw, Math.floor(Date.now() / 1000)) } : {},
  );
}

function jsonChannel(name: "slack" | "teams", url: string, body: (m: NotificationMessage) => string): Channel {
  return httpChannel(name, url, body, () => ({}));
}

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, as Stripe signs its webhooks: the
 * time is signed with the body, so a receiver that refuses a `t` older than its tolerance
 * (docs/operations.md) refuses a captured request replayed later.
 */
export function signatureOf(secret: string, rawBody: string, unixSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.`, "utf8").update(rawBody, "utf8").digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

function emailChannel(smtpUrl: string, to: string, from: string): Channel {
  registerSecretValue(smtpUrl);
  const password = new URL(smtpUrl).password;
  if (password) registerSecretValue(decodeURIComponent(password));
  // Bounded, so a stuck mail server cannot outlast the delivery's lease (nodemailer waits minutes by default).
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  return {
    name: "email",
    display: `${hostOf(smtpUrl)} → ${to}`,
    async send(message, signal) {
      signal.throwIfAborted();
      const { subject, text, messageId } = emailContent(message);
      try {
        await transport.sendMail({
          from,
          to,
          subject,
          text,
          messageId,
          headers: { "X-Notification-Event": message.event, "X-Notification-Id": message.id },
        });
      } catch (error) {
        const e = error as { responseCode?: number; code?: string; message?: string };
        throw new DeliveryError(
          `SMTP ${e.responseCode ?? e.code ?? "error"}: ${String(e.message ?? "").slice(0, 200)}`,
        );
      }
    },
  };
}

/**
 * The longest Retry-After a receiver is obeyed for. A longer one (a year, or digits past any date)
 * is no retry plan: the delivery is parked with it as its error (src/notify/deliverer.ts).
 */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * Retry-After as seconds or an HTTP date; undefined when absent or unreadable. Past
 * MAX_RETRY_AFTER_MS the answer is Infinity, never a number no Date can hold.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const value = header.trim();
  const at = /^\d+$/.test(value) ? now + Number(value) * 1000 : Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  const ms = Math.max(0, at - now);
  return ms > MAX_RETRY_AFTER_MS ? Infinity : ms;
}

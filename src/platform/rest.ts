import type { HttpOutcome, HttpRequest, HttpTransport, RetryPolicy } from "./transport.js";

/**
 * Typed calls for the platform REST endpoints the mirror sync writes to, on top of the shared
 * transport. Each call names its rate-limit family so a 429 pauses exactly the endpoints that
 * share the limit: `/email/status` (its own hourly limit), the two subscription-set endpoints
 * (one shared per-minute limit), and the preference center per workspace (10 per minute each).
 * The API key is per call because preference centers belong to workspaces with their own keys.
 */

export type EmailSubscriptionState = "subscribed" | "unsubscribed" | "opted_in";
export type GroupSubscriptionState = "subscribed" | "unsubscribed";

export type SubscriptionGroupEntry = {
  subscription_group_id: string;
  subscription_state: GroupSubscriptionState;
  external_ids?: string[];
  emails?: string[];
  phones?: string[];
};

export type PreferenceCenterBody = {
  name?: string;
  preference_center_title?: string;
  preference_center_page_html: string;
  confirmation_page_html: string;
  state?: "active" | "draft";
  options?: Record<string, unknown>;
};

export const REST_FAMILIES = {
  emailStatus: "email.status",
  subscriptionSet: "subscription.status.set",
  preferenceCenter: (workspace: string) => `preference_center:${workspace}`,
} as const;

export type RestCallOptions = {
  apiKey: string;
  retry?: RetryPolicy;
  signal?: AbortSignal;
  beforeSend?: HttpRequest["beforeSend"];
};

export class PlatformRestClient {
  constructor(private readonly transport: HttpTransport) {}

  /** `POST /email/status`: up to 50 addresses, one state. Setting a state is safe to repeat. */
  setEmailStatus(
    emails: readonly string[],
    state: EmailSubscriptionState,
    options: RestCallOptions,
  ): Promise<HttpOutcome> {
    return this.transport.request({
      ...common(options),
      family: REST_FAMILIES.emailStatus,
      method: "POST",
      route: "/email/status",
      body: { email: emails, subscription_state: state },
      idempotent: true,
    });
  }

  /** `POST /v2/subscription/status/set`: several (group, state) entries, each with ≤50 identifiers of one kind. */
  setSubscriptionStatuses(entries: readonly SubscriptionGroupEntry[], options: RestCallOptions): Promise<HttpOutcome> {
    return this.transport.request({
      ...common(options),
      family: REST_FAMILIES.subscriptionSet,
      method: "POST",
      route: "/v2/subscription/status/set",
      body: { subscription_groups: entries },
      idempotent: true,
    });
  }

  /** `PUT /preference_center/v1/{id}`: replaces the page; paced by the caller (10 per minute per workspace). */
  putPreferenceCenter(
    workspace: string,
    externalId: string,
    body: PreferenceCenterBody,
    options: RestCallOptions,
  ): Promise<HttpOutcome> {
    return this.transport.request({
      ...common(options),
      family: REST_FAMILIES.preferenceCenter(workspace),
      method: "PUT",
      route: "/preference_center/v1/:id",
      params: { id: externalId },
      body,
    });
  }
}

function common(options: RestCallOptions): Pick<HttpRequest, "headers" | "retry" | "signal" | "beforeSend"> {
  return {
    headers: { authorization: `Bearer ${options.apiKey}` },
    retry: options.retry,
    signal: options.signal,
    beforeSend: options.beforeSend,
  };
}

/** The platform's error message from a 4xx body (`{"message": ...}`, `{"errors": [...]}`, or text), for parking. */
export function platformMessage(body: unknown, status: number): string {
  if (body && typeof body === "object") {
    const record = body as Record<string, unknown>;
    if (typeof record.message === "string" && record.message) return record.message;
    if (typeof record.detail === "string" && record.detail) return record.detail;
    if (Array.isArray(record.errors) && record.errors.length) return JSON.stringify(record.errors).slice(0, 500);
  }
  if (typeof body === "string" && body && !/^\s*</.test(body)) return body.slice(0, 500);
  return `HTTP ${status}`;
}

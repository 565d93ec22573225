import { createPrivateKey, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";

/**
 * The process environment, parsed once at boot. Every setting the service reads from the
 * environment is declared here, so `docs/operations.md` and this file are the whole reference.
 *
 * Past ~300 lines by design: every setting in one schema is the reference (with docs/operations.md).
 */

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v));

/**
 * The word templates put where a secret goes (deploy/kubernetes/secret.example.yaml's
 * `CHANGE-ME-generate-with-openssl-rand-base64-32` is long and varied enough to pass for random):
 * a secret still holding it was never filled in. Never part of a random secret in practice.
 */
const PLACEHOLDER = /change[-_ ]?me/i;
const notPlaceholder = (fix: string) =>
  [
    (v: string) => !PLACEHOLDER.test(v),
    { message: `is the template's placeholder (CHANGE-ME), not a secret: ${fix}` },
  ] as const;
const GENERATE = "generate one with: openssl rand -base64 32";

/**
 * A shared secret a client presents (ADMIN_TOKEN, SCIM_TOKEN): long and varied enough that guessing
 * is hopeless even before the failed-auth throttles, and not a template's placeholder. Generated
 * tokens (adm_…, scim_…, openssl rand) pass; words, repeated characters, short values and CHANGE-ME… do not.
 */
const MIN_TOKEN_LENGTH = 32;
// 8, not more: a random hex secret (16 symbols) of 32 characters must always pass.
const MIN_TOKEN_DISTINCT_CHARACTERS = 8;
const highEntropyToken = optionalString.pipe(
  z
    .string()
    .refine(...notPlaceholder(GENERATE))
    .refine((v) => v.length >= MIN_TOKEN_LENGTH && new Set(v).size >= MIN_TOKEN_DISTINCT_CHARACTERS, {
      message: `must be a random secret of at least ${MIN_TOKEN_LENGTH} characters using at least ${MIN_TOKEN_DISTINCT_CHARACTERS} different ones; ${GENERATE}`,
    })
    .optional(),
);
/** A credential another system issued (the platform's SCIM token and API key): only the placeholder is refused. */
const issuedCredential = (issuer: string) =>
  optionalString.pipe(
    z
      .string()
      .refine(...notPlaceholder(`set the one ${issuer} issued`))
      .optional(),
  );

/**
 * EVIDENCE_SIGNING_KEY: an Ed25519 private key, as PEM text or the path of a PEM file, that signs
 * evidence packs' manifests (docs/access-review.md, "Evidence"). Checked at boot; never logged.
 */
const ed25519PrivateKey = optionalString.transform((raw, ctx): KeyObject | undefined => {
  if (raw === undefined) return undefined;
  let pem = raw.replaceAll("\\n", "\n");
  if (!pem.includes("-----BEGIN")) {
    try {
      pem = readFileSync(raw.trim(), "utf8");
    } catch {
      ctx.addIssue({
        code: "custom",
        message: "is neither a PEM private key nor a readable file; make one with: openssl genpkey -algorithm ed25519",
      });
      return z.NEVER;
    }
  }
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType === "ed25519") return key;
  } catch {
    /* reported below */
  }
  ctx.addIssue({
    code: "custom",
    message: "must be an Ed25519 private key in PEM (make one with: openssl genpkey -algorithm ed25519)",
  });
  return z.NEVER;
});

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

const jsonRecord = z.string().transform((raw, ctx) => {
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  ctx.addIssue({ code: "custom", message: "must be a JSON object" });
  return z.NEVER;
});

const envSchema = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
    LOG_LEVEL: z.enum(["error", "warn", "info", "http", "verbose", "debug", "silly"]).default("info"),
    PORT: port(8080),
    HOST: z.string().default("0.0.0.0"),
    /**
     * Graceful shutdown (docs/operations.md, "Stopping and upgrading"): on SIGTERM or SIGINT, /readyz
     * answers 503 and the listener keeps serving this long, so load balancers stop sending first.
     */
    SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(300_000).default(5_000),
    /** The longest a shutdown takes, delay included: what is still running then is cut off (exit 1). */
    SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(25_000),
    /**
     * Which proxies' X-Forwarded-* headers to believe (Express "trust proxy"): "loopback" (a proxy on
     * this host), a hop count, or comma-separated addresses/CIDRs of the TLS-terminating proxy.
     * Decides req.secure (the admin cookie's Secure flag) and the client address in logs.
     */
    TRUST_PROXY: z
      .string()
      .default("loopback")
      .transform((raw): string | number | false => {
        const value = raw.trim();
        if (value === "") return "loopback"; // empty counts as unset, like every other setting
        if (value === "false") return false;
        return /^\d+$/.test(value) ? Number(value) : value;
      })
      .superRefine((value, ctx) => {
        const problem = trustProxyProblem(value);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
    PUBLIC_URL: optionalString.pipe(
      z.url({ message: "must be an absolute URL such as https://scim.example.com" }).optional(),
    ),
    DATABASE_URL: optionalString.pipe(
      z
        .string()
        .regex(/^postgres(ql)?:\/\//, "must start with postgres:// or postgresql://")
        .refine(...notPlaceholder("set the database role's password"))
        .optional(),
    ),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
    /**
     * Whether `start` applies pending migrations (under an advisory lock). False: a separate step (an
     * init container) runs `scim-connector migrate` first, and a process finding the schema older than
     * it needs refuses to start.
     */
    MIGRATE_AT_BOOT: z.stringbool().default(true),
    EMBEDDED_PG_DIR: z.string().default(".data/postgres"),
    SCIM_TOKEN: highEntropyToken,
    SCIM_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
    SCIM_MAX_PAGE_SIZE: z.coerce.number().int().min(1).max(10_000).default(1000),

    PLATFORM_URL: optionalString.pipe(
      z.url({ message: "must be an absolute URL such as https://rest.example.com" }).optional(),
    ),
    PLATFORM_API_KEY: issuedCredential("the platform's REST API settings"),
    /** Mirror sync: JSON {"<workspace>": "<REST API key>"} for preference centers; `default` falls back to PLATFORM_API_KEY. */
    PLATFORM_WORKSPACE_API_KEYS: optionalString.pipe(
      jsonRecord.pipe(z.record(z.string(), z.string().min(1))).optional(),
    ),
    PLATFORM_SCIM_TOKEN: issuedCredential("the platform's SCIM provisioning page"),
    PLATFORM_REQUEST_ORIGIN: optionalString,
    PLATFORM_SCIM_DAILY_BUDGET: z.coerce.number().int().min(1).default(5000),
    /** Share of the daily budget only deprovisioning may spend. */
    PLATFORM_SCIM_BUDGET_RESERVE_PERCENT: z.coerce.number().min(0).max(90).default(10),
    /** `utc-day` matches the platform's day; `rolling-24h` is stricter when the two clocks may differ. */
    PLATFORM_SCIM_BUDGET_WINDOW: z.enum(["utc-day", "rolling-24h"]).default("utc-day"),
    /** What a changed userName (email) does: held for an admin, or delete + create. */
    RECONCILE_ON_EMAIL_CHANGE: z.enum(["hold", "recreate"]).default("hold"),
    /**
     * Strip now, delete later: an account whose user lost all access (no mapped group left, or
     * deactivated) is PUT with no permissions at once and DELETEd only this long after (0: delete at
     * once). 24 h outlasts Entra's incremental cycles (about 40 min, longer when busy or in
     * quarantine) and an Okta admin's separate clicks for a move, a mis-click or a rehire the same day.
     */
    RECONCILE_DEPROVISION_GRACE_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(90 * 86_400_000)
      .default(86_400_000),
    /** An account found on the platform (a 409 on create), not created by the connector: stripped and kept, or deleted like the others. */
    RECONCILE_ON_ADOPTED_DEPROVISION: z.enum(["strip", "delete"]).default("strip"),
    /** Reconciles in flight at once per process (0 turns the worker off in this process). */
    RECONCILE_WORKERS: z.coerce.number().int().min(0).max(16).default(3),
    RECONCILE_POLL_MS: z.coerce.number().int().min(50).default(1_000),
    RECONCILE_LOG_RETENTION_DAYS: z.coerce.number().int().min(1).default(90),
    /** Data retention (docs/operations.md): days a deactivated, unchanged IdP user keeps names and profile (0: forever). */
    RETENTION_DEACTIVATED_USER_DAYS: z.coerce.number().int().min(0).default(0),
    /** Access campaigns (docs/access-review.md): hours before the due date that reviewers with open items are reminded (0: no reminder). */
    CAMPAIGN_REMIND_HOURS: z.coerce.number().min(0).default(48),
    /** What a campaign's close does with undecided items: keep them (reported as undecided) or revoke them. */
    CAMPAIGN_UNDECIDED_AT_CLOSE: z.enum(["keep", "revoke"]).default("keep"),
    /** Days of budget ledger kept (0: forever); at least 2, as the budget's window may span two UTC days. */
    RETENTION_BUDGET_DEBITS_DAYS: z.coerce
      .number()
      .int()
      .refine(
        (days) => days === 0 || days >= 2,
        "must be 0 (keep forever) or at least 2 (the budget reads the last day)",
      )
      .default(35),
    /** Days finished full-resync runs are kept (0: forever). */
    RETENTION_RESYNC_RUNS_DAYS: z.coerce.number().int().min(0).default(90),
    /** Days the platform's Security Event record is kept (docs/platform-record.md; 0: forever). */
    PLATFORM_EVENTS_RETENTION_DAYS: z.coerce.number().int().min(0).default(400),
    /**
     * The platform's daily Security Event export (docs/platform-record.md): the bucket and prefix it
     * writes to, read with the AWS SDK's default credential chain; unset, nothing is polled.
     */
    SECURITY_EVENTS_S3_URI: optionalString.transform((raw, ctx): S3Location | undefined => {
      if (raw === undefined) return undefined;
      const location = parseS3Uri(raw.trim());
      if (location) return location;
      ctx.addIssue({
        code: "custom",
        message:
          "must be s3://BUCKET/PREFIX, the bucket and folder the platform's daily export writes to (e.g. s3://acme-security-events/braze/); a bucket name is 3-63 lower-case letters, digits, dots and hyphens",
      });
      return z.NEVER;
    }),
    /** The bucket's region (else the SDK's own: AWS_REGION, the profile). */
    SECURITY_EVENTS_S3_REGION: optionalString,
    /** An S3-compatible store's address (MinIO, Ceph, …): addressed path-style. */
    SECURITY_EVENTS_S3_ENDPOINT: optionalString.pipe(
      z
        .url({
          protocol: /^https?$/,
          message: "must be the store's http(s) URL, such as https://minio.example.com:9000",
        })
        .optional(),
    ),
    /** Minutes between two looks at the export's bucket. */
    SECURITY_EVENTS_POLL_MINUTES: z.coerce.number().int().min(1).max(1440).default(60),
    /**
     * The report's columns where its headers are not among the names recognised (docs/platform-record.md):
     * `time=Date,actor=Who,event=Action,account=Target,ip=From,details=Notes`, any of the six.
     */
    SECURITY_EVENTS_COLUMNS: optionalString.transform((raw, ctx): EventColumnNames => {
      if (raw === undefined) return {};
      const parsed = parseEventColumnNames(raw);
      if (typeof parsed !== "string") return parsed;
      ctx.addIssue({ code: "custom", message: parsed });
      return z.NEVER;
    }),
    /** A grant from the IdP waits until the user has been quiet this long, so the grants that follow go out in one call (0: off). */
    RECONCILE_SETTLE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
    /** The longest a grant waits to settle, counted from the first held change of the burst. */
    RECONCILE_SETTLE_MAX_MS: z.coerce.number().int().min(0).max(3_600_000).default(120_000),
    /** Mass-deprovision breaker: more deprovisions per hour than max(MIN, PERCENT% of accounts) are held for approval. */
    DEPROVISION_BREAKER_MIN: z.coerce.number().int().min(0).default(25),
    DEPROVISION_BREAKER_PERCENT: z.coerce.number().min(0).max(100).default(10),
    /** Full resync: cron expression (UTC) for scheduled runs; "off" disables the schedule. */
    RESYNC_CRON: z.string().default("0 2 * * *"),
    /** Whether scheduled runs also verify platform accounts (phase 2, spare budget only). */
    RESYNC_VERIFY: z.stringbool().default(true),
    /** Drift found by verification: enforce (put back what was applied) or report only. */
    RESYNC_DRIFT: z.enum(["enforce", "report"]).default("enforce"),
    /**
     * A managed account changed on the platform by someone other than the connector (its Security
     * Event record, docs/platform-record.md): revert (read it, put back what the mapping grants) or
     * report (read it, keep the change and show it).
     */
    PLATFORM_OUTSIDE_CHANGES: z.enum(["revert", "report"]).default("revert"),
    /** How often the scheduler looks at the cron, stalled runs and finished verifications. */
    SCHEDULER_TICK_MS: z.coerce.number().int().min(50).default(15_000),
    /** Share of the daily budget verification leaves for live changes (on top of the reserve). */
    RESYNC_VERIFY_HEADROOM_PERCENT: z.coerce.number().min(0).max(90).default(10),
    /** The platform's record: an account event this close (minutes) to a write the connector sent that account is its own write. */
    SECURITY_EVENTS_OWN_WRITE_WINDOW_MINUTES: z.coerce.number().int().min(1).max(1_440).default(10),
    /** The actor text the platform writes for the connector's API writes, when an admin knows it (not published); also marks own writes. */
    SECURITY_EVENTS_CONNECTOR_ACTOR: z.string().trim().min(1).optional(),
    /** Accounts made by hand: lookups that confirm them, at most this many per UTC day (0: none), from the budget's lowest lane. */
    UNMANAGED_LOOKUPS_PER_DAY: z.coerce.number().int().min(0).max(100_000).default(200),
    /** How often the discovery lane looks for candidates to confirm when it has nothing to do. */
    UNMANAGED_LOOKUP_POLL_MS: z.coerce.number().int().min(50).default(60_000),
    /** Which parts of the service this process runs: any of web, worker, scheduler (default all). */
    ROLES: z
      .string()
      .default("web,worker,scheduler")
      .transform((raw, ctx) => {
        const roles = raw
          .split(",")
          .map((r) => r.trim())
          .filter(Boolean);
        const bad = roles.filter((r) => !["web", "worker", "scheduler"].includes(r));
        if (bad.length || !roles.length) {
          ctx.addIssue({
            code: "custom",
            message: `must be a comma-separated list of web, worker, scheduler (got ${bad.join(", ") || "nothing"})`,
          });
          return z.NEVER;
        }
        return new Set(roles as ("web" | "worker" | "scheduler")[]);
      }),
    PLATFORM_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
    /** Mirror sync: how long a claim of pending changes is a worker's; after a crash its changes wait this long (docs/mirror.md). */
    MIRROR_LEASE_MS: z.coerce.number().int().min(1_000).default(120_000),
    /** Platform quarantine (docs/operations.md): pause a family's work after sustained auth failures or a high failure rate. */
    QUARANTINE_ENABLED: z.stringbool().default(true),
    /** Consecutive 401/403 that quarantine a family (0: never for auth). */
    QUARANTINE_AUTH_FAILURES: z.coerce.number().int().min(0).default(5),
    /** Failed share of the last QUARANTINE_WINDOW calls (at least QUARANTINE_MIN_CALLS) that quarantines a family (0: never). */
    QUARANTINE_FAILURE_RATE_PERCENT: z.coerce.number().min(0).max(100).default(50),
    QUARANTINE_WINDOW: z.coerce.number().int().min(1).max(10_000).default(20),
    QUARANTINE_MIN_CALLS: z.coerce.number().int().min(1).default(10),
    /** How long a quarantine lasts before one probe call may decide to resume. */
    QUARANTINE_COOLING_SECONDS: z.coerce.number().min(0.1).default(900),
    /** Bearer token for GET /metrics; without it /metrics answers loopback callers only. */
    METRICS_TOKEN: optionalString.pipe(
      z
        .string()
        .min(16, "must be at least 16 characters")
        .refine(...notPlaceholder(GENERATE))
        .optional(),
    ),
    MAPPING_FILE: z.string().default("config/mapping.yaml"),

    /** Notifications (docs/operations.md, "Alerts"): each channel is optional; the URLs carry tokens and are never shown. */
    NOTIFY_WEBHOOK_URL: optionalString.pipe(
      z.url({ message: "must be an absolute URL such as https://hooks.example.com/scim-connector" }).optional(),
    ),
    NOTIFY_WEBHOOK_SECRET: optionalString.pipe(
      z.string().min(16, "must be at least 16 characters (e.g. openssl rand -hex 32)").optional(),
    ),
    NOTIFY_SLACK_WEBHOOK_URL: optionalString.pipe(
      z.url({ message: "must be the Slack incoming-webhook URL, https://hooks.slack.com/services/…" }).optional(),
    ),
    NOTIFY_TEAMS_WEBHOOK_URL: optionalString.pipe(
      z
        .url({ message: 'must be the URL of the Teams workflow\'s "When a Teams webhook request is received" trigger' })
        .optional(),
    ),
    SMTP_URL: optionalString.pipe(
      z
        .string()
        .regex(/^smtps?:\/\/[^/]+/, "must look like smtp://user:password@mail.example.com:587 or smtps://…:465")
        .optional(),
    ),
    NOTIFY_EMAIL_TO: optionalString,
    NOTIFY_EMAIL_FROM: optionalString,
    /** Hours without an authenticated SCIM request before idp.silent (0: never). */
    IDP_SILENCE_HOURS: z.coerce.number().min(0).default(24),
    /** Failed sends before a channel's delivery is parked with its last error. */
    NOTIFY_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
    /** First retry delay; doubles per failure up to an hour (a receiver's Retry-After wins when longer). */
    NOTIFY_RETRY_BASE_MS: z.coerce.number().int().min(10).default(10_000),
    /** How long a claimed delivery is one sender's; a sender that dies mid-send is replaced after this. */
    NOTIFY_LEASE_MS: z.coerce.number().int().min(1_000).default(60_000),

    /** OAuth 2.0 token endpoint (docs/operations.md, "OAuth"): minutes an issued access token lasts. */
    OAUTH_ACCESS_TOKEN_MINUTES: z.coerce.number().int().min(1).max(1440).default(60),
    /** Days a refresh token (authorization code grant) stays usable; each use rotates it for this long again. */
    OAUTH_REFRESH_TOKEN_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
    /** JWT client assertions (RFC 7523; Entra workload identity federation): the issuer they must come from. */
    OAUTH_JWT_ISSUER: optionalString,
    /** The audience the assertions must name (this connector's application ID URI or token URL). */
    OAUTH_JWT_AUDIENCE: optionalString,
    /** The subject the assertions must name (the IdP's provisioning identity). */
    OAUTH_JWT_SUBJECT: optionalString,
    /** The client_id the IdP sends with its assertions (and the name the credential is listed under). */
    OAUTH_JWT_CLIENT_ID: z
      .string()
      .regex(/^[\w.@-]{1,100}$/, "must be 1 to 100 letters, digits, '.', '_', '@' or '-'")
      .default("entra-wif"),
    /** Seconds between two fetches of the JWKS URL when an unknown kid arrives (keys are otherwise cached 10 minutes). */
    // At least 1 s: 0 removed the limit on refetches an unknown `kid` may prompt (a flood of them, a fetch each).
    OAUTH_JWT_JWKS_REFRESH_SECONDS: z.coerce.number().min(1).max(3600).default(30),
    /** The tenant (`tid` claim) the assertions must name; unset: not checked. */
    OAUTH_JWT_TENANT_ID: optionalString,
    /** Where the issuer publishes its keys (https; cached, refreshed on an unknown kid at most every 30 s). */
    OAUTH_JWT_JWKS_URL: optionalString.pipe(
      z
        .string()
        .url("must be the issuer's https:// JWKS URL")
        .refine((v) => /^https:\/\//i.test(v) || /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/i.test(v), {
          message: "must be https:// (plain http only on loopback, for tests): keys fetched in clear can be forged",
        })
        .optional(),
    ),
    /** A JWKS file instead of the URL (air-gapped set-ups and tests). */
    OAUTH_JWT_JWKS_FILE: optionalString,
    ADMIN_TOKEN: highEntropyToken,
    EVIDENCE_SIGNING_KEY: ed25519PrivateKey,
    SAML_ENTRY_POINT: optionalString,
    SAML_ISSUER: optionalString,
    SAML_IDP_CERT: optionalString,
    /** The IdP's next signing certificate during a rollover: responses signed by either are accepted. */
    SAML_IDP_CERT_NEXT: optionalString,
    SAML_CALLBACK_URL: optionalString,
    /** The IdP's entity id; when set, the response's and assertion's Issuer must equal it (docs/operations.md). */
    SAML_IDP_ISSUER: optionalString,
    /** Admin UI: the SAML attributes carrying the role (any of them; Okta's `role` and Entra's role claim by default), and which values mean admin / viewer (comma-separated). */
    SAML_ROLE_ATTRIBUTE: z.string().min(1).default("role,http://schemas.microsoft.com/ws/2008/06/identity/claims/role"),
    SAML_ADMIN_VALUES: z.string().default("admin"),
    SAML_VIEWER_VALUES: z.string().default("viewer"),
    /** Failed-authentication throttles, per surface (docs/operations.md): failures per client address, and from everyone, per window. */
    AUTH_THROTTLE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
    AUTH_THROTTLE_PER_ADDRESS: z.coerce.number().int().min(1).default(20),
    AUTH_THROTTLE_GLOBAL: z.coerce.number().int().min(1).default(600),
    /** GET /admin/saml/login per client address per minute (each stores a request id for 10 minutes). */
    SAML_LOGIN_PER_ADDRESS_PER_MINUTE: z.coerce.number().int().min(1).default(30),
    ADMIN_SESSION_IDLE_MINUTES: z.coerce
      .number()
      .int()
      .min(1)
      .max(24 * 60)
      .default(30),
    /** A signed-in session ends this long after sign-in however active it is, so a role removed in the IdP takes effect. */
    ADMIN_SESSION_MAX_AGE_HOURS: z.coerce
      .number()
      .min(0.1)
      .max(24 * 30)
      .default(12),
    /** Local (ADMIN_TOKEN) sign-in is only safe on loopback; set true to listen elsewhere anyway. */
    ADMIN_ALLOW_REMOTE: z
      .enum(["true", "false", "1", "0", ""])
      .default("false")
      .transform((v) => v === "true" || v === "1"),

    EMULATOR_PORT: port(0),
    EMULATOR_API_KEYS: jsonRecord.default({ "dev-api-key": "*" }),
    EMULATOR_SCIM_TOKEN: z.string().min(1).default("dev-scim-token"),
    EMULATOR_REQUEST_ORIGINS: optionalString,
    /** The emulator's permission model; strict because the platform refuses legacy SCIM strings from December 2026. */
    EMULATOR_PERMISSIONS: z.enum(["legacy", "granular", "granular-strict"]).default("granular-strict"),
    /** The S3-compatible endpoint of `emulator --security-export` (path-style); AWS itself when unset. */
    EMULATOR_S3_ENDPOINT: optionalString,
    EMULATOR_S3_REGION: optionalString,
  })
  .superRefine((env, ctx) => {
    if (env.SHUTDOWN_DELAY_MS >= env.SHUTDOWN_TIMEOUT_MS) {
      ctx.addIssue({
        code: "custom",
        path: ["SHUTDOWN_TIMEOUT_MS"],
        message: `must be more than SHUTDOWN_DELAY_MS (${env.SHUTDOWN_DELAY_MS}): the delay is part of it, and requests in flight need time after it; raise it or lower SHUTDOWN_DELAY_MS`,
      });
    }
    for (const problem of jwtIssuerProblems(env)) ctx.addIssue({ code: "custom", ...problem });
    if (env.RECONCILE_SETTLE_MAX_MS < env.RECONCILE_SETTLE_MS) {
      ctx.addIssue({
        code: "custom",
        path: ["RECONCILE_SETTLE_MAX_MS"],
        message: `must be at least RECONCILE_SETTLE_MS (${env.RECONCILE_SETTLE_MS}): it caps the settle wait; raise it or lower RECONCILE_SETTLE_MS`,
      });
    }
  });

export type Env = z.infer<typeof envSchema>;

/** Where the platform's daily export lands: a bucket and a key prefix ("" for the whole bucket). */
export type S3Location = { bucket: string; prefix: string };

function parseS3Uri(raw: string): S3Location | undefined {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw);
  if (!match || match[1]!.includes("..")) return undefined;
  return { bucket: match[1]!, prefix: match[2] ?? "" };
}

/** The Security Event report's fields whose column SECURITY_EVENTS_COLUMNS may name. */
export const EVENT_COLUMN_FIELDS = ["time", "actor", "event", "account", "ip", "details"] as const;
export type EventColumnField = (typeof EVENT_COLUMN_FIELDS)[number];
/** SECURITY_EVENTS_COLUMNS read: each field named, the header that holds it. */
export type EventColumnNames = Partial<Record<EventColumnField, string>>;

/** `time=Date,event=Action,…` → { time: "Date", event: "Action" }, or what is wrong with it. */
function parseEventColumnNames(raw: string): EventColumnNames | string {
  const names: EventColumnNames = {};
  for (const pair of raw.split(",")) {
    if (!pair.trim()) continue;
    const [key = "", ...rest] = pair.split("=");
    const field = key.trim().toLowerCase();
    const header = rest.join("=").trim();
    if (!(EVENT_COLUMN_FIELDS as readonly string[]).includes(field) || !header)
      return `"${pair.trim()}" is not FIELD=HEADER with FIELD one of ${EVENT_COLUMN_FIELDS.join(", ")}; e.g. time=Date,actor=Who,event=Action,account=Target`;
    if (names[field as EventColumnField] !== undefined) return `names ${field} twice`;
    names[field as EventColumnField] = header;
  }
  return names;
}

function jwksFileProblem(file: string): string | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as { keys?: unknown };
    if (Array.isArray(parsed.keys) && parsed.keys.length > 0) return undefined;
    return 'is not a JWKS (a JSON object with a non-empty "keys" array): save the issuer\'s keys document there';
  } catch (error) {
    return `cannot be read as JSON (${(error as Error).message.slice(0, 120)}): give the path of the issuer's JWKS document`;
  }
}

/**
 * JWT client assertions need the whole set (issuer, audience, subject, and one key source) or none:
 * half a set would either refuse every assertion or check less than the operator believes.
 */
function jwtIssuerProblems(env: {
  OAUTH_JWT_ISSUER?: string | undefined;
  OAUTH_JWT_AUDIENCE?: string | undefined;
  OAUTH_JWT_SUBJECT?: string | undefined;
  OAUTH_JWT_TENANT_ID?: string | undefined;
  OAUTH_JWT_JWKS_URL?: string | undefined;
  OAUTH_JWT_JWKS_FILE?: string | undefined;
}): { path: string[]; message: string }[] {
  const set = {
    OAUTH_JWT_ISSUER: env.OAUTH_JWT_ISSUER,
    OAUTH_JWT_AUDIENCE: env.OAUTH_JWT_AUDIENCE,
    OAUTH_JWT_SUBJECT: env.OAUTH_JWT_SUBJECT,
  };
  const anySet =
    Object.values(set).some(Boolean) ||
    Boolean(env.OAUTH_JWT_TENANT_ID || env.OAUTH_JWT_JWKS_URL || env.OAUTH_JWT_JWKS_FILE);
  if (!anySet) return [];
  const problems = Object.entries(set)
    .filter(([, v]) => !v)
    .map(([name]) => ({
      path: [name],
      message:
        "is required when JWT client assertions are configured (OAUTH_JWT_*): set it, or unset every OAUTH_JWT_* setting",
    }));
  if (env.OAUTH_JWT_JWKS_FILE) {
    const problem = jwksFileProblem(env.OAUTH_JWT_JWKS_FILE);
    if (problem) problems.push({ path: ["OAUTH_JWT_JWKS_FILE"], message: problem });
  }
  if (Boolean(env.OAUTH_JWT_JWKS_URL) === Boolean(env.OAUTH_JWT_JWKS_FILE))
    problems.push({
      path: ["OAUTH_JWT_JWKS_URL"],
      message: "set exactly one of OAUTH_JWT_JWKS_URL (the issuer's published keys) and OAUTH_JWT_JWKS_FILE",
    });
  return problems;
}

/** More proxy hops than any sane chain (CDN → load balancer → ingress) has. */
const MAX_TRUSTED_HOPS = 5;

/**
 * Why a TRUST_PROXY value trusts (nearly) everyone, or undefined when it names real proxies.
 * Trusting every address lets any client forge X-Forwarded-For (its address in logs and
 * throttles) and X-Forwarded-Proto (the admin cookie's Secure flag).
 */
function trustProxyProblem(value: string | number | false): string | undefined {
  const fix =
    'name the TLS-terminating proxy instead: "loopback" (a proxy on this host), its address or subnet (e.g. "10.0.0.0/8"), or the exact hop count (e.g. 1)';
  if (value === false) return undefined;
  if (typeof value === "number")
    return value > MAX_TRUSTED_HOPS
      ? `${value} hops trusts whatever a client puts in X-Forwarded-For; ${fix}`
      : undefined;
  for (const entry of value.split(",").map((e) => e.trim())) {
    if (entry === "true" || entry === "*")
      return `"${entry}" trusts every proxy, so any client can forge its address; ${fix}`;
    const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
    if (!cidr) continue;
    const ipv6 = cidr[1]!.includes(":");
    const bits = Number(cidr[2]);
    // Narrower than every private range (10/8, fc00::/7): a prefix this wide covers the internet.
    if (bits < (ipv6 ? 7 : 8))
      return `"${entry}" trusts ${bits === 0 ? "every address" : "a large part of the internet"}, so any client can forge its address; ${fix}`;
  }
  return undefined;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Configuration is invalid:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Parses `source` (normally `process.env`); throws ConfigError listing every bad value and how to fix it. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const result = envSchema.safeParse(source);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join(".") || "(environment)";
    const given =
      typeof source[name] === "string" ? ` (got ${JSON.stringify(redactIfSecret(name, source[name]!))})` : "";
    return `${name}: ${issue.message}${given}`;
  });
  throw new ConfigError(problems);
}

function redactIfSecret(name: string, value: string): string {
  return /TOKEN|KEY|SECRET|PASSWORD|CERT|DATABASE_URL|WEBHOOK_URL|SMTP_URL/.test(name) ? "<redacted>" : value;
}

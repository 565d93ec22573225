import { isIPv6 } from "node:net";
import { RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Counter } from "prom-client";
import type { Database } from "../db/database.js";
import type { Env } from "../config/env.js";
import { sharedRateLimiter } from "../db/auth/throttleStore.js";
import { log } from "../logging/logger.js";

/**
 * Throttles on failed authentication, per surface (SCIM bearer, admin API bearer, admin UI
 * sign-in): at most AUTH_THROTTLE_PER_ADDRESS failures per client address and AUTH_THROTTLE_GLOBAL
 * failures from everyone per AUTH_THROTTLE_WINDOW_SECONDS; past either, a failing request gets 429
 * with Retry-After instead of 401. Counters live in PostgreSQL, so replicas share them.
 *
 * Only failures are counted and only failures are refused: a valid credential is checked first
 * and always passes, whatever its address has done. The IdP's provisioning service sends from
 * addresses it shares with its other tenants, so refusing good requests from a throttled address
 * (or all requests past the global cap) would let anyone lock our IdP out by pointing their own
 * tenant at us with a wrong token. Guessing is defeated by the tokens' entropy (src/config/env.ts);
 * the throttle bounds what a flood of guesses costs and makes it visible (logs, /metrics).
 */

export type AuthSurface = "scim" | "admin-api" | "admin-login" | "oauth";
export type AuthThrottleMetrics = { authFailures: Counter<"surface">; authThrottled: Counter<"surface" | "scope"> };
export type Throttled = { scope: "address" | "global"; retryAfterSeconds: number };
/** One throttle per surface, built once per process by src/service/http.ts and handed to the surface's router. */
export type AuthThrottles = {
  scim: FailedAuthThrottle;
  adminApi: FailedAuthThrottle;
  adminLogin: FailedAuthThrottle;
  oauth: FailedAuthThrottle;
};
/** A per-address allowance (perAddressAllowance): true while the address is within it. */
export type AddressAllowance = (address: string | undefined) => Promise<boolean>;

type ThrottleLimits = Pick<Env, "AUTH_THROTTLE_PER_ADDRESS" | "AUTH_THROTTLE_GLOBAL" | "AUTH_THROTTLE_WINDOW_SECONDS">;

export class FailedAuthThrottle {
  constructor(
    private readonly surface: AuthSurface,
    private readonly perAddress: RateLimiterAbstract,
    private readonly everyone: RateLimiterAbstract,
    private readonly metrics?: AuthThrottleMetrics,
  ) {}

  /** Counts one failed attempt from `address`; says when failures are now refused (429) and for how long. */
  async recordFailure(address: string | undefined): Promise<Throttled | undefined> {
    this.metrics?.authFailures.inc({ surface: this.surface });
    const client = addressKey(address);
    // An address already over its own limit does not also use up everyone's allowance.
    const throttled =
      (await this.consume(this.perAddress, client, "address", address)) ??
      (await this.consume(this.everyone, "all", "global", address));
    if (throttled) this.metrics?.authThrottled.inc({ surface: this.surface, scope: throttled.scope });
    return throttled;
  }

  /**
   * True when failures from `address` itself are already refused, as this process knows from
   * memory: asked before a token is looked up, so a blocked sender's guesses cost no query. False
   * when unsure (another replica's count, or not yet over): the lookup then decides. The global
   * cap is deliberately not asked: what others send must never keep a valid token from being
   * looked up (issue 34: after a restart, wrong tokens from anywhere locked the IdP out).
   */
  addressBlockedNow(address: string | undefined): boolean {
    return inMemoryBlockMs(this.perAddress, addressKey(address)) > 0;
  }

  private async consume(
    limiter: RateLimiterAbstract,
    key: string,
    scope: Throttled["scope"],
    address: string | undefined,
  ): Promise<Throttled | undefined> {
    try {
      await limiter.consume(key);
      return undefined;
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) {
        log.warn("auth", "failed-auth throttle unavailable", { surface: this.surface, error: outcome });
        return undefined; // counting failed: authentication itself still refused the request
      }
      const retryAfterSeconds = Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
      // Logged once per key and window: the request that crossed the limit (later ones are refused from memory).
      if (outcome.consumedPoints === limiter.points + 1) {
        log.warn("auth", "failed authentications throttled", {
          surface: this.surface,
          scope,
          ip: address,
          limit: limiter.points,
          retryAfterSeconds,
        });
      }
      return { scope, retryAfterSeconds };
    }
  }
}

/** rate-limiter-flexible's in-memory block (inMemoryBlockOnConsumed, src/db/auth/throttleStore.ts), which its types omit. */
function inMemoryBlockMs(limiter: RateLimiterAbstract, key: string): number {
  const store = limiter as RateLimiterAbstract & { getInMemoryBlockMsBeforeExpire?(rlKey: string): number };
  return store.getInMemoryBlockMsBeforeExpire?.(limiter.getKey(key)) ?? 0;
}

export function failedAuthThrottle(
  db: Database,
  limits: ThrottleLimits,
  surface: AuthSurface,
  metrics?: AuthThrottleMetrics,
): FailedAuthThrottle {
  const durationSeconds = limits.AUTH_THROTTLE_WINDOW_SECONDS;
  return new FailedAuthThrottle(
    surface,
    sharedRateLimiter(db, {
      keyPrefix: `auth-fail:${surface}:address`,
      points: limits.AUTH_THROTTLE_PER_ADDRESS,
      durationSeconds,
    }),
    sharedRateLimiter(db, {
      keyPrefix: `auth-fail:${surface}:global`,
      points: limits.AUTH_THROTTLE_GLOBAL,
      durationSeconds,
    }),
    metrics,
  );
}

/**
 * The key an address is counted under: IPv4 as is, IPv6 by its /64 (one subscriber's network
 * hands out as many addresses as it likes, so counting single ones would count nothing).
 */
export function addressKey(address: string | undefined): string {
  if (!address) return "unknown";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = "", tail = ""] = address.split("::");
  const headGroups = head ? head.split(":") : [];
  const tailGroups = address.includes("::") && tail ? tail.split(":") : [];
  const groups = address.includes("::")
    ? [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill("0"), ...tailGroups]
    : headGroups;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

/**
 * A plain per-address request count (every request counts, not only failures), for unauthenticated
 * routes that store something: true while the address is within `perMinute`. Past it the route
 * stores nothing but still serves (GET /admin/saml/login signs its request id instead), so a crowd
 * behind one address cannot lock anyone out. Counting failed: within (serve rather than refuse).
 */
export function perAddressAllowance(db: Database, spec: { name: string; perMinute: number }): AddressAllowance {
  const limiter = sharedRateLimiter(db, {
    keyPrefix: `requests:${spec.name}`,
    points: spec.perMinute,
    durationSeconds: 60,
  });
  return async (address) => {
    try {
      await limiter.consume(addressKey(address));
      return true;
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) return true;
      if (outcome.consumedPoints === spec.perMinute + 1)
        log.warn("http", "request allowance used up; storing nothing more", {
          route: spec.name,
          ip: address,
          perMinute: spec.perMinute,
        });
      return false;
    }
  };
}

import type { Equivalents } from "../mapping/granular.js";
import type { ExplainedGrant } from "../mapping/reasons.js";
import type { DesiredDashboardUser } from "../mapping/types.js";
import type { HttpOutcome } from "../platform/transport.js";
import type { PlatformAccount } from "../platform/scim.js";

/**
 * What the reconciler needs from the outside, as narrow interfaces: the platform's SCIM user
 * family and the desired state of one user. The composition root (service.ts) supplies them.
 */

/** Runs right before a request leaves; it debits the budget and throws BudgetExhausted when it cannot. */
export type BeforeSend = () => Promise<void>;

export interface PlatformScimPort {
  createUser(desired: DesiredDashboardUser, beforeSend: BeforeSend): Promise<HttpOutcome>;
  findUserByUserName(userName: string, beforeSend: BeforeSend): Promise<HttpOutcome>;
  getUser(platformId: string, beforeSend: BeforeSend): Promise<HttpOutcome>;
  replaceUser(platformId: string, desired: DesiredDashboardUser, beforeSend: BeforeSend): Promise<HttpOutcome>;
  deleteUser(platformId: string, beforeSend: BeforeSend): Promise<HttpOutcome>;
  /**
   * The dashboard user a platform resource describes, in the comparable desired shape, named by
   * the identifiers in `byId` (src/platform/scim.ts `fromPlatformResource`), with the identifiers
   * the answer carried.
   */
  readResource(body: unknown, byId?: ReadonlySet<string>): PlatformAccount | undefined;
  /** The resources of a filter lookup's ListResponse. */
  readList(body: unknown, byId?: ReadonlySet<string>): PlatformAccount[];
}

export type DesiredState = {
  /** False when the IdP user no longer exists (deleted). */
  exists: boolean;
  userName: string | null;
  desired: DesiredDashboardUser | null;
  /** Whether the IdP user is active (absent when it no longer exists); words why `desired` is null. */
  active?: boolean;
  /** Why `desired` has each grant (rules, groups), computed on demand from the same IdP state and mapping. */
  reasons?: () => ExplainedGrant[];
  /** The mapping's `vocabulary.equivalents` (to compare legacy and granular states). */
  equivalents?: Equivalents;
};

export interface DesiredStateSource {
  load(userId: string): Promise<DesiredState>;
  /** The mapping in force's `vocabulary.equivalents` (a verification compares legacy and granular states with them). */
  equivalents?(): Promise<Equivalents>;
}

export class BudgetExhausted extends Error {
  constructor(readonly resetsAt: Date) {
    super(`platform SCIM budget exhausted until ${resetsAt.toISOString()}`);
    this.name = "BudgetExhausted";
  }
}

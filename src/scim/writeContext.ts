import { BadRequestError, PreconditionFailedError } from "../errors.js";
import type { DirtyTrigger, IdpChange } from "../vocabulary/reconcile.js";
import { etagOf } from "./resources.js";

/** Who is writing: copied onto the dirty marks so a reconcile can name the IdP request that caused it. */
export type WriteContext = { requestId?: string; method: string; ifMatch?: string };

export function idpTrigger(context: WriteContext, resource: string, change: IdpChange): DirtyTrigger {
  return { kind: "idp", requestId: context.requestId, method: context.method, resource, change };
}

/** What a user write did, in the words the log uses: activation changes are named as such. */
export function userChange(wasActive: boolean | undefined, isActive: boolean): IdpChange {
  if (wasActive === undefined) return { what: "user-created" };
  if (wasActive && !isActive) return { what: "user-deactivated" };
  if (!wasActive && isActive) return { what: "user-reactivated" };
  return { what: "user-updated" };
}

/** If-Match (RFC 7644 3.14): `*` or one of the listed ETags must name the current version. */
export function checkIfMatch(context: WriteContext, version: number): void {
  if (!context.ifMatch) return;
  const current = etagOf(version);
  const tags = context.ifMatch.split(",").map((t) => t.trim());
  if (tags.includes("*") || tags.some((t) => t === current || `W/${t}` === current)) return;
  throw new PreconditionFailedError(`The resource has changed: its version is ${current}`);
}

/** The request body of a create or replace: a JSON object. */
export function resourceBody(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new BadRequestError("The request body must be a JSON object", "invalidSyntax");
  }
  return body as Record<string, unknown>;
}

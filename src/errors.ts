/**
 * The one error vocabulary of the service. Domain code throws these; each surface has one
 * translator (RFC 7644 bodies on /scim, JSON on /admin/api, a page in the UI). Database errors
 * are classified by SQLSTATE (`sqlState`, `isTransientDatabaseError`), never by message text.
 */

export type ScimType =
  | "invalidSyntax"
  | "invalidFilter"
  | "invalidPath"
  | "invalidValue"
  | "noTarget"
  | "uniqueness"
  | "mutability"
  | "tooMany"
  | "invalidVers"
  | "sensitive";

export class AppError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly scimType?: ScimType,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, scimType: ScimType = "invalidValue") {
    super(message, 400, scimType);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super(message, 404);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, scimType: ScimType = "uniqueness") {
    super(message, 409, scimType);
  }
}

export class PreconditionFailedError extends AppError {
  constructor(message: string) {
    super(message, 412);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = "Not allowed") {
    super(message, 403);
  }
}

/** The caller has work of this kind running already; the handler sets Retry-After. */
export class TooManyRequestsError extends AppError {
  constructor(message: string) {
    super(message, 429, "tooMany");
  }
}

/** Thrown by a repository when a write violates a unique constraint (SQLSTATE 23505). */
export class UniqueViolationError extends ConflictError {
  constructor(
    message: string,
    readonly constraint?: string,
  ) {
    super(message, "uniqueness");
  }
}

type PgLikeError = { code?: unknown; constraint?: unknown; driverError?: { code?: unknown; constraint?: unknown } };

/** SQLSTATE of a pg or TypeORM error, if it has one. */
export function sqlState(error: unknown): string | undefined {
  const e = error as PgLikeError | undefined;
  const code = e?.driverError?.code ?? e?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export function constraintName(error: unknown): string | undefined {
  const e = error as PgLikeError | undefined;
  const name = e?.driverError?.constraint ?? e?.constraint;
  return typeof name === "string" ? name : undefined;
}

/** SQLSTATE classes that mean "the database is unreachable or restarting": retry later. */
export function isTransientDatabaseError(error: unknown): boolean {
  const state = sqlState(error);
  if (state)
    return (
      state.startsWith("08") || state.startsWith("57P") || state === "40001" || state === "40P01" || state === "53300"
    );
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === "ECONNREFUSED" || code === "ECONNRESET" || code === "EPIPE" || code === "ETIMEDOUT";
}

import type { z } from "zod";
import { BadRequestError } from "../errors.js";

/**
 * The one step that turns a request's body or query into its schema's type: a value the schema
 * refuses is a BadRequestError (400 on every surface) naming each field and what is wrong with it.
 */
export function validate<T>(schema: z.ZodType<T>, value: unknown, where: "body" | "query" = "body"): T {
  const result = schema.safeParse(value);
  if (!result.success)
    throw new BadRequestError(result.error.issues.map((i) => `${i.path.join(".") || where}: ${i.message}`).join("; "));
  return result.data;
}

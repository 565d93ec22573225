import { z } from "zod";
import type { AccessQuery } from "./report.js";

/** The report's query string, shared by the API and the page: `?at=<ISO 8601 with offset>&workspace=…` (the CLI parses its own flags: src/cli/access.ts). */
export const accessQuerySchema = z.object({
  at: z.iso.datetime({ offset: true }).optional(),
  user: z.string().trim().max(320).optional(),
  workspace: z.string().trim().max(200).optional(),
  team: z.string().trim().max(200).optional(),
  permission: z.string().trim().max(200).optional(),
  group: z.string().trim().max(300).optional(),
  rule: z.string().trim().max(200).optional(),
  admins: z.enum(["true", "false", "1", "0", "on"]).optional(),
  cursor: z.string().max(2_000).optional(),
  limit: z.coerce.number().int().min(1).max(1_000).optional(),
  format: z.enum(["csv", "json"]).optional(),
});

export type AccessQueryInput = z.infer<typeof accessQuerySchema>;

/** Empty fields (a submitted form) mean no filter. */
export function toAccessQuery(q: AccessQueryInput): AccessQuery {
  const text = (v: string | undefined) => (v ? v : undefined);
  return {
    ...(q.at ? { at: new Date(q.at) } : {}),
    user: text(q.user),
    workspace: text(q.workspace),
    team: text(q.team),
    permission: text(q.permission),
    group: text(q.group),
    rule: text(q.rule),
    admins: q.admins === "true" || q.admins === "1" || q.admins === "on",
  };
}

/** Drops the empty fields of a submitted form before it is validated (`at=` means now). */
export function withoutEmpty(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => typeof v === "string" && v.trim() !== ""));
}

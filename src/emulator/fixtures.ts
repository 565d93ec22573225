import {
  loadDirectoryFixtures,
  parseDirectoryFixtures,
  type DirectoryFixtures,
} from "./dashboard/directoryFixtures.js";
import { badRequest } from "./http.js";
import type { DataIntegration, EmulatorState, InvalidPhone, SyncJob } from "./state.js";
import { isE164, isEmail, normaliseEmail, parseDateTime } from "./validation.js";
import { isRecord } from "../json.js";

/**
 * `POST /_emulator/fixtures`: loads what the API has no write endpoint for, in the document's own
 * record shapes. Integrations are upserted by `integration_id`, an integration's sync jobs are
 * replaced, invalid phones are upserted by `phone`. `hardBounces` and `spam` (address lists) are
 * an emulator addition so the removal endpoints have something to remove. `workspaces`, `roles`
 * and `permissionSets` fill the company's directory (src/emulator/dashboard/directoryFixtures.ts).
 */

const JOB_STATUSES = ["running", "success", "partial", "error", "config_error"];

export type Fixtures = DirectoryFixtures & {
  integrations?: DataIntegration[];
  syncJobs?: Record<string, SyncJob[]>;
  invalidPhones?: InvalidPhone[];
  hardBounces?: string[];
  spam?: string[];
};

/** Pure: validates the body; throws a 400 naming the first bad record. */
export function parseFixtures(body: unknown): Fixtures {
  if (!isRecord(body)) throw badRequest("fixtures must be a JSON object");
  const out: Fixtures = parseDirectoryFixtures(body);
  if (body.integrations !== undefined) {
    if (!Array.isArray(body.integrations)) throw badRequest("integrations must be an array");
    out.integrations = body.integrations.map((r, i) => {
      if (!isRecord(r) || typeof r.integration_id !== "string" || r.integration_id === "")
        throw badRequest(`integrations[${i}].integration_id is required`);
      return r as DataIntegration;
    });
  }
  if (body.syncJobs !== undefined) {
    if (!isRecord(body.syncJobs)) throw badRequest("syncJobs must map integration ids to arrays");
    out.syncJobs = {};
    for (const [id, jobs] of Object.entries(body.syncJobs)) {
      if (!Array.isArray(jobs)) throw badRequest(`syncJobs.${id} must be an array`);
      jobs.forEach((job, i) => {
        if (!isRecord(job) || !JOB_STATUSES.includes(String(job.job_status)))
          throw badRequest(`syncJobs.${id}[${i}].job_status must be one of ${JOB_STATUSES.join(", ")}`);
      });
      out.syncJobs[id] = jobs as SyncJob[];
    }
  }
  if (body.invalidPhones !== undefined) {
    if (!Array.isArray(body.invalidPhones)) throw badRequest("invalidPhones must be an array");
    out.invalidPhones = body.invalidPhones.map((r, i) => {
      if (!isRecord(r) || !isE164(r.phone)) throw badRequest(`invalidPhones[${i}].phone must be E.164`);
      if (!parseDateTime(r.invalid_detected_at))
        throw badRequest(`invalidPhones[${i}].invalid_detected_at must be ISO 8601`);
      if (r.reason !== "provider_error" && r.reason !== "deactivated")
        throw badRequest(`invalidPhones[${i}].reason must be provider_error or deactivated`);
      return { phone: r.phone, invalid_detected_at: String(r.invalid_detected_at), reason: r.reason };
    });
  }
  for (const list of ["hardBounces", "spam"] as const) {
    const value = body[list];
    if (value === undefined) continue;
    if (!Array.isArray(value) || !value.every(isEmail)) throw badRequest(`${list} must be an array of email addresses`);
    out[list] = (value as string[]).map(normaliseEmail);
  }
  return out;
}

export function loadFixtures(state: EmulatorState, fixtures: Fixtures): void {
  // First: it is the one part that can still refuse (a clash with the directory), and then loads nothing.
  loadDirectoryFixtures(state.directory, fixtures);
  for (const record of fixtures.integrations ?? []) {
    if (state.integrationIds.has(record.integration_id)) {
      state.integrations = state.integrations.map((r) => (r.integration_id === record.integration_id ? record : r));
    } else {
      state.integrations.push(record);
      state.integrationIds.add(record.integration_id);
    }
  }
  for (const [id, jobs] of Object.entries(fixtures.syncJobs ?? {})) state.syncJobs.set(id, jobs);
  for (const record of fixtures.invalidPhones ?? []) state.invalidPhones.set(record.phone, record);
  for (const email of fixtures.hardBounces ?? []) state.hardBounces.add(email);
  for (const email of fixtures.spam ?? []) state.spam.add(email);
}

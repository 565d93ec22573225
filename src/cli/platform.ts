import { parseArgs } from "node:util";
import type { Database } from "../db/database.js";
import { systemClock } from "../clock.js";
import type { Env } from "../config/env.js";
import { getPlatformBinding, type PlatformStateCounts } from "../db/platform/bindingRepository.js";
import {
  assertForgetMoves,
  describePlatform,
  forgetPlatform,
  platformIdentity,
  previewPlatformForget,
} from "../reconcile/platformBinding.js";
import { cliActor } from "./commandActor.js";
import { formatHold } from "./reconcile.js";
import { platformEventsCommand } from "./platformEvents.js";
import { MappingStore } from "../mapping/store.js";
import { DesiredAccess } from "../mapping/desiredAccess.js";
import { createPlatformRecordAnalysis } from "../platformRecord/index.js";
import { createPlatformRecord } from "../platformRecord/frontDoor.js";
import { platformImportOptions } from "../platformRecord/importer.js";
import { platformUnmanagedCommand } from "./platformUnmanaged.js";

/**
 * `scim-connector platform show`, `scim-connector platform events import FILE` (platformEvents.ts)
 * and `scim-connector platform forget --dry-run|--confirm [--as NAME]`:
 * which platform the database reconciles with, and the explicit move to the platform PLATFORM_URL
 * now names (docs/operations.md, "Changing the platform"). Both forgets list the held actions
 * first; either is refused when the database already reconciles with that platform.
 */
export async function platformCommand(env: Env, db: Database, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === "events") {
    // The analysis a running service would run after the import (src/platformRecord/index.ts).
    const desired = new DesiredAccess(await MappingStore.load(env.MAPPING_FILE));
    const analyse = createPlatformRecordAnalysis({ env, db, clock: systemClock, desired });
    return platformEventsCommand(
      createPlatformRecord({ ...platformImportOptions(env), db, clock: systemClock, analyse }),
      rest,
    );
  }
  if (sub === "unmanaged") return platformUnmanagedCommand(createPlatformRecord({ db, clock: systemClock }), rest);
  const { values } = parseArgs({
    args: rest,
    options: { "dry-run": { type: "boolean" }, confirm: { type: "boolean" }, as: { type: "string" } },
  });
  const target = platformIdentity(env.PLATFORM_URL);
  if (sub === "show") {
    const binding = await getPlatformBinding(db);
    console.log(
      binding
        ? `This database reconciles with ${describePlatform(binding.platform)} (since ${binding.boundAt.toISOString()}).`
        : "This database is bound to no platform yet; the first start with a platform records it.",
    );
    if (binding && binding.platform !== target)
      console.log(
        `PLATFORM_URL names ${describePlatform(target)}: the service will not start until you run \`scim-connector platform forget\`.`,
      );
    return;
  }
  if (sub !== "forget")
    throw new Error(
      "platform needs a subcommand: show, events import FILE, unmanaged [--json] [--all], or forget --dry-run | --confirm [--as NAME]",
    );
  const dryRun = values["dry-run"] ?? false;
  if (!dryRun && !values.confirm)
    throw new Error(
      "platform forget deletes what this database knows of the old platform's accounts: run it with --dry-run to see how many, then with --confirm",
    );
  // The held actions are listed before anything is forgotten: a forget drops them undecided.
  const preview = await previewPlatformForget(db, target);
  console.log(
    preview.heldActions.length
      ? `${preview.heldActions.length} held action(s) waiting for a decision:\n${preview.heldActions.map((h) => `  ${formatHold(h)}`).join("\n")}`
      : "No action is held for a decision.",
  );
  assertForgetMoves(preview);
  const from = preview.from ? describePlatform(preview.from) : "no platform";
  if (dryRun) {
    console.log(`Would forget what this database knew of ${from}: ${describeCounts(preview.forgotten)}.`);
    console.log(
      `Nothing was changed. With --confirm, the database is bound to ${describePlatform(target)} and every IdP user is reconciled afresh there.`,
    );
    return;
  }
  const report = await forgetPlatform(db, target, { actor: cliActor(values.as), now: systemClock.now() });
  console.log(
    `Forgot what this database knew of ${report.from ? describePlatform(report.from) : "no platform"}: ${describeCounts(report.forgotten)}.`,
  );
  console.log(
    `Bound to ${describePlatform(target)}; ${report.usersQueued} IdP user(s) queued: the service's workers provision them there when it starts.`,
  );
}

function describeCounts(c: PlatformStateCounts): string {
  return [
    `${c.accounts} platform account(s)`,
    `${c.creating} unanswered create(s)`,
    `${c.heldActions} held action(s)`,
    `${c.queuedVerifications} queued verification(s)`,
    `${c.quarantinedFamilies} quarantined endpoint famil${c.quarantinedFamilies === 1 ? "y" : "ies"}`,
  ].join(", ");
}

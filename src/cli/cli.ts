import { ConfigError, loadEnv, type Env } from "../config/env.js";
import { withDatabase } from "./database.js";
import { approvalsCommand, planCommand } from "./reconcile.js";
import { platformCommand } from "./platform.js";
import { mappingCommand } from "./mapping.js";
import { resyncCommand } from "./resync.js";
import { TOKEN_USAGE, tokenCommand, tokenMigrates } from "./token.js";
import { accessReportCommand } from "./access.js";
import { auditCommand } from "./audit.js";
import { evidenceCommand, evidenceVerifyCommand } from "./evidence.js";
import { campaignCommand } from "./campaign.js";
import { runEmulatorCommand } from "./emulator.js";
import { start } from "./start.js";

/**
 * `scim-connector <command>`: the usage, the dispatch to each command's module, and the database
 * a command runs against (`withDatabase`, cli/database.ts). `start` is cli/start.ts.
 */

const USAGE = `Usage: scim-connector <command>

Commands:
  start                      run the service (the default; what \`npm start\` does)
  migrate                    apply database migrations and exit (a migration Job; \`start\` also
                             does unless MIGRATE_AT_BOOT=false; the other commands need a
                             migrated database)
${TOKEN_USAGE}
  resync [--dry-run] [--verify] [--as NAME]
                             full resync: re-derive every user and queue the differences
                             (--verify: also check platform accounts with spare budget;
                             --dry-run: only print what would change and what it would cost)
  plan <userName> [--json]   what the reconciler would do for one user (desired, last applied,
                             difference, action); calls nothing, spends no budget
  approvals list [--all]     actions held for an admin (mass deprovisions, email changes)
  approvals approve|reject <userId|userName|all> [--as NAME]
                             (--as: who decides, for the log; default: the OS account)
  mapping check FILE         validate a mapping file offline and print its rules (no database)
  mapping migrate FILE [--write] [--pin-ids]
                             rewrite a legacy mapping file in the granular permission model
                             (stdout, or FILE with --write; --pin-ids: add learned identifiers)
  platform show              which platform this database reconciles with
  platform events import FILE [--as NAME]
                             import the platform's Security Event report (a CSV downloaded from
                             its dashboard): prints the events imported, those already known and
                             each line skipped; a file that is not the report is refused (exit 1)
  platform unmanaged [--json] [--all]
                             accounts made by hand on the platform that the IdP does not manage
                             (found in the platform's record, confirmed by one lookup each)
  platform forget --dry-run|--confirm [--as NAME]
                             move to the platform PLATFORM_URL names: list the held actions, forget
                             the old platform's accounts (--dry-run: only count them) and provision
                             everyone afresh; refused when already bound to that platform
  access-report [--at DATE] [--workspace NAME] [--format csv|json]
                             who holds what on the platform and why (now, or as of DATE),
                             from the database only; CSV (default) or JSON on stdout
  audit verify [--head HASH]...
                             re-compute the log's and the decisions' hash chains; names the
                             first entry that does not match, or a chained entry left at or
                             below the anchor (exit 1); each --head (an evidence pack's signed
                             head hash) must be on a chain that verifies (exit 1 otherwise)
  evidence --from DATE --to DATE [--out FILE] [--accept-unverified-chain]
                             write a signed evidence pack (a tar) for the window: access reports
                             at both ends, every change in words, revocations and their latency,
                             the mapping; needs EVIDENCE_SIGNING_KEY. While a hash chain does not
                             verify: no pack (exit 1) unless --accept-unverified-chain
  evidence verify FILE --public-key PEM|FILE | --trust-embedded-key
                             check a pack's signature, every file's SHA-256 and the chains'
                             verdicts it records (exit 1); without --public-key the signer is not
                             checked, so the pack fails unless --trust-embedded-key
  campaign start --name N --due TIME --fallback WHO [--scope everything|company-admins|workspace|permission|groups|not-signed-in|unmanaged]
                 [--workspace W] [--permission P] [--group G]... [--days N] [--reviewer WHO[@@WORKSPACE]]...
  campaign list | show <id> [--all] [--open] | decide <id> keep|revoke <itemId>... [--comment TEXT]
                 [--removal strip|delete]    (an account made by hand: strip it, or delete it once approved)
  campaign close <id>        access certification campaigns (WHO: a SAML NameID or role:admin);
                             --as NAME: the reviewer acting (default: the OS account)
  emulator [--port N] [--host H] [--permissions legacy|granular|granular-strict] [--security-export s3://BUCKET/PREFIX]
                             run the platform emulator alone (port: EMULATOR_PORT, else 9090;
                             permission model: EMULATOR_PERMISSIONS, else granular-strict; the
                             daily security export to EMULATOR_S3_ENDPOINT, else AWS)
`;

export async function runCli(argv: string[]): Promise<void> {
  const [command = "start", ...rest] = argv;
  if (command === "--help" || command === "help" || command === "-h") {
    process.stdout.write(USAGE);
    return;
  }
  if (command === "evidence" && rest[0] === "verify") return evidenceVerifyCommand(rest.slice(1));
  const env = loadEnvOrExit();
  switch (command) {
    case "start":
      return start(env);
    case "migrate":
      return withDatabase(env, { migrates: true }, async (db) => {
        const applied = await db.migrate(() => console.log("Another process is migrating the database; waiting…"));
        console.log(applied.length ? `Applied: ${applied.join(", ")}` : "Database is up to date.");
      });
    case "token":
      return withDatabase(env, { migrates: tokenMigrates(rest) }, (db) => tokenCommand(db, rest));
    case "resync":
      return withDatabase(env, { migrates: false }, (db) => resyncCommand(env, db, rest));
    case "plan":
      return withDatabase(env, { migrates: false }, (db) => planCommand(env, db, rest));
    case "mapping":
      return mappingCommand(env, rest);
    case "platform":
      return withDatabase(env, { migrates: false }, (db) => platformCommand(env, db, rest));
    case "approvals":
      return withDatabase(env, { migrates: false }, (db) => approvalsCommand(db, rest));
    case "access-report":
      return withDatabase(env, { migrates: false }, (db) => accessReportCommand(env, db, rest));
    case "audit":
      return withDatabase(env, { migrates: false }, (db) => auditCommand(db, rest));
    case "evidence":
      return withDatabase(env, { migrates: false }, (db) => evidenceCommand(env, db, rest));
    case "campaign":
      return withDatabase(env, { migrates: false }, (db) => campaignCommand(env, db, rest));
    case "emulator":
      return runEmulatorCommand(env, rest);
    default:
      process.stderr.write(`Unknown command: ${command}\n\n${USAGE}`);
      process.exitCode = 2;
  }
}

function loadEnvOrExit(): Env {
  try {
    return loadEnv();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\nFix these environment variables and start again.\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
}

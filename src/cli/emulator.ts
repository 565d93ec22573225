import { parseArgs } from "node:util";
import { ConfigError, type Env } from "../config/env.js";
import { log } from "../logging/logger.js";
import { startEmulator, type EmulatorOptions } from "../emulator/index.js";
import { PERMISSIONS_OPTIONS, type PermissionsOption } from "../emulator/dashboard/permissionModel.js";
import { parseS3Uri, type SecurityExportOptions } from "../emulator/security/export.js";

/**
 * `scim-connector emulator [--port N] [--host H] [--permissions MODEL] [--security-export s3://bucket/prefix]`:
 * runs the emulator alone until SIGINT/SIGTERM. Port: `--port`, else EMULATOR_PORT when set to a
 * non-zero value, else 9090. Permission model: `--permissions`, else EMULATOR_PERMISSIONS (default
 * granular-strict). The security export goes to EMULATOR_S3_ENDPOINT when set, with the AWS SDK's
 * default credentials.
 */

const DEFAULT_EMULATOR_PORT = 9090;

/** EMULATOR_* settings as emulator options; a malformed EMULATOR_API_KEYS is a ConfigError. */
export function emulatorOptionsFromEnv(env: Env): EmulatorOptions {
  const apiKeys: Record<string, "*" | string[]> = {};
  const problems: string[] = [];
  for (const [key, grant] of Object.entries(env.EMULATOR_API_KEYS)) {
    if (grant === "*" || (Array.isArray(grant) && grant.every((p) => typeof p === "string")))
      apiKeys[key] = grant as "*" | string[];
    else
      problems.push(
        `EMULATOR_API_KEYS: the value for a key must be "*" or a list of permission names (see docs/emulator.md)`,
      );
  }
  if (problems.length) throw new ConfigError(problems);
  const origins =
    env.EMULATOR_REQUEST_ORIGINS?.split(",")
      .map((o) => o.trim())
      .filter(Boolean) ?? [];
  return { apiKeys, scimToken: env.EMULATOR_SCIM_TOKEN, ...(origins.length ? { requestOrigins: origins } : {}) };
}

/** `--permissions`, else EMULATOR_PERMISSIONS; a value outside the three models is a ConfigError naming them. */
export function emulatorPermissions(env: Env, flag: string | undefined): PermissionsOption {
  if (flag === undefined) return env.EMULATOR_PERMISSIONS;
  const allowed: readonly string[] = PERMISSIONS_OPTIONS;
  if (allowed.includes(flag)) return flag as PermissionsOption;
  throw new ConfigError([`--permissions: must be one of ${allowed.join(", ")} (got ${JSON.stringify(flag)})`]);
}

/** `--security-export` as export options; a URI that is not s3://bucket/prefix is a ConfigError. */
function emulatorSecurityExport(env: Env, uri: string | undefined): SecurityExportOptions | undefined {
  if (uri === undefined) return undefined;
  try {
    parseS3Uri(uri);
  } catch (error) {
    throw new ConfigError([`--security-export: ${(error as Error).message}`]);
  }
  return {
    uri,
    ...(env.EMULATOR_S3_ENDPOINT ? { endpoint: env.EMULATOR_S3_ENDPOINT } : {}),
    ...(env.EMULATOR_S3_REGION ? { region: env.EMULATOR_S3_REGION } : {}),
  };
}

/** The standalone command's options: the EMULATOR_* settings with its flags over them. */
export function emulatorCommandOptions(env: Env, args: string[]): EmulatorOptions {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      permissions: { type: "string" },
      "security-export": { type: "string" },
    },
  });
  const securityExport = emulatorSecurityExport(env, values["security-export"]);
  const port = values.port !== undefined ? Number(values.port) : env.EMULATOR_PORT || DEFAULT_EMULATOR_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be a port number (got ${values.port})`);
  return {
    ...emulatorOptionsFromEnv(env),
    port,
    host: values.host ?? "127.0.0.1",
    permissions: emulatorPermissions(env, values.permissions),
    ...(securityExport ? { securityExport } : {}),
  };
}

export async function runEmulatorCommand(env: Env, args: string[]): Promise<void> {
  const options = emulatorCommandOptions(env, args);
  const emulator = await startEmulator(options);
  log.info("emulator", "emulator started", { url: emulator.url, permissions: options.permissions });
  console.log(`
platform emulator is running (state in memory).

  Base URL        ${emulator.url}
  API keys        ${Object.keys(env.EMULATOR_API_KEYS).length} from EMULATOR_API_KEYS
  Permissions     ${options.permissions}   (--permissions, else EMULATOR_PERMISSIONS)
  Control plane   ${emulator.url}/_emulator/stats   (loopback callers only)
  Security export ${options.securityExport ? `${options.securityExport.uri}   (${options.securityExport.endpoint ?? "AWS"})` : "off   (--security-export s3://bucket/prefix)"}
`);
  const stop = (signal: string) => {
    console.log(`\n${signal}: stopping the emulator…`);
    void emulator.close().then(() => process.exit(0));
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
}

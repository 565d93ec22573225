import type { Env } from "../config/env.js";

/** Workspace → REST API key. `default` (email states, subscription groups, and preference centers without a workspace) is PLATFORM_API_KEY unless configured. */
export type WorkspaceApiKeys = Readonly<Record<string, string>>;

export function workspaceApiKeys(env: Pick<Env, "PLATFORM_API_KEY" | "PLATFORM_WORKSPACE_API_KEYS">): WorkspaceApiKeys {
  const keys: Record<string, string> = { ...(env.PLATFORM_WORKSPACE_API_KEYS ?? {}) };
  if (!keys.default && env.PLATFORM_API_KEY) keys.default = env.PLATFORM_API_KEY;
  return keys;
}

import { startEmulator, type EmulatorOptions, type RunningEmulator } from "../../src/emulator/index.js";

/** A started emulator and a small fetch wrapper, so every contract test goes over real HTTP. */

const API_KEY = "dev-api-key";
const SCIM_TOKEN = "dev-scim-token";
export const SCIM_HEADERS = { authorization: `Bearer ${SCIM_TOKEN}`, "x-request-origin": "https://idp.example.com" };

type Reply = { status: number; headers: Headers; text: string; body: any };

export type Client = {
  emulator: RunningEmulator;
  call(
    method: string,
    path: string,
    options?: { body?: unknown; headers?: Record<string, string>; rawBody?: string },
  ): Promise<Reply>;
  /** REST call with the all-permission key. */
  rest(method: string, path: string, body?: unknown, key?: string): Promise<Reply>;
  scim(method: string, path: string, body?: unknown): Promise<Reply>;
  control(method: string, path: string, body?: unknown): Promise<Reply>;
  close(): Promise<void>;
};

export async function startClient(options: EmulatorOptions = {}): Promise<Client> {
  const emulator = await startEmulator({ port: 0, ...options });
  const call: Client["call"] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined && method !== "GET" && method !== "HEAD") {
      body = JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(emulator.url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  };
  return {
    emulator,
    call,
    rest: (method, path, body, key = API_KEY) =>
      call(method, path, { body, headers: { authorization: `Bearer ${key}` } }),
    scim: (method, path, body) => call(method, path, { body, headers: SCIM_HEADERS }),
    control: (method, path, body) => call(method, `/_emulator${path}`, { body }),
    close: () => emulator.close(),
  };
}

export function dashboardUser(userName: string, overrides: Record<string, unknown> = {}) {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    userName,
    name: { givenName: "Ada", familyName: "Lovelace" },
    department: "engineering",
    permissions: {
      companyPermissions: ["basic_access"],
      appGroup: [
        {
          appGroupName: "Production",
          appGroupPermissions: ["send_campaigns_canvases"],
          team: [{ teamName: "Growth", teamPermissions: ["export_user_data"] }],
        },
      ],
    },
    ...overrides,
  };
}

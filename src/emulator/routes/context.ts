import type { AuthConfig } from "../pipeline/auth.js";
import type { RouteRegistrar } from "../http.js";
import type { EmulatorState } from "../state.js";

/** What every route module receives: the state, the auth config and the counting registrar. */
export type RouteContext = { state: EmulatorState; auth: AuthConfig; route: RouteRegistrar };

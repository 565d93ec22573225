import type { RequestHandler } from "express";
import { badRequest } from "../http.js";

/**
 * Injected failures for tests and rehearsals: a status answer, a delay, or a dropped
 * connection, matched by method and path prefix. A fault with `count` fires that many times and
 * then disappears; one with `probability` fires on that share of matching requests; one with
 * neither fires on every matching request until `DELETE /_emulator/faults`.
 */

export type Fault = {
  id: number;
  method?: string;
  path: string;
  status: number | null;
  count?: number;
  probability?: number;
  delayMs: number;
  dropConnection: boolean;
  /** Seconds sent as `Retry-After` with the status (a 429 or 503 that says when to come back). */
  retryAfter?: number;
};

export type FaultSpec = Omit<Fault, "id">;

/** Pure: validates the control-plane body of `POST /_emulator/faults`. */
export function parseFaultSpec(input: unknown): FaultSpec {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw badRequest("fault must be a JSON object");
  const o = input as Record<string, unknown>;
  const path = o.path ?? "/";
  if (typeof path !== "string" || !path.startsWith("/")) throw badRequest("path must be a path prefix starting with /");
  if (o.method !== undefined && (typeof o.method !== "string" || !/^[A-Za-z]+$/.test(o.method)))
    throw badRequest("method must be an HTTP method");
  const status = o.status ?? null;
  if (status !== null && (typeof status !== "number" || !Number.isInteger(status) || status < 100 || status > 599))
    throw badRequest("status must be an HTTP status or null");
  if (o.count !== undefined && o.probability !== undefined) throw badRequest("give count or probability, not both");
  if (o.count !== undefined && (typeof o.count !== "number" || !Number.isInteger(o.count) || o.count < 1))
    throw badRequest("count must be a positive integer");
  if (o.probability !== undefined && (typeof o.probability !== "number" || o.probability < 0 || o.probability > 1))
    throw badRequest("probability must be between 0 and 1");
  const delayMs = o.delayMs ?? 0;
  if (typeof delayMs !== "number" || delayMs < 0 || delayMs > 600_000)
    throw badRequest("delayMs must be between 0 and 600000");
  const dropConnection = o.dropConnection ?? false;
  if (typeof dropConnection !== "boolean") throw badRequest("dropConnection must be a boolean");
  if (status === null && !dropConnection && delayMs === 0)
    throw badRequest("a fault needs a status, a delayMs or dropConnection");
  if (
    o.retryAfter !== undefined &&
    (typeof o.retryAfter !== "number" || !Number.isInteger(o.retryAfter) || o.retryAfter < 0 || status === null)
  ) {
    throw badRequest("retryAfter must be whole seconds, with a status");
  }
  return {
    method: typeof o.method === "string" ? o.method.toUpperCase() : undefined,
    path,
    status,
    count: o.count as number | undefined,
    probability: o.probability as number | undefined,
    delayMs,
    dropConnection,
    ...(o.retryAfter !== undefined ? { retryAfter: o.retryAfter as number } : {}),
  };
}

export class FaultList {
  private faults: Fault[] = [];
  private nextId = 1;
  /** Delays in progress, so closing the emulator does not wait for (or act after) them. */
  readonly pendingDelays = new Set<NodeJS.Timeout>();

  constructor(private readonly random: () => number = Math.random) {}

  add(spec: FaultSpec): Fault {
    const fault = { ...spec, id: this.nextId++ };
    this.faults.push(fault);
    return fault;
  }

  clear(): void {
    this.faults = [];
  }

  cancelPendingDelays(): void {
    for (const timer of this.pendingDelays) clearTimeout(timer);
    this.pendingDelays.clear();
  }

  list(): Fault[] {
    return this.faults.map((f) => ({ ...f }));
  }

  /** The first fault that fires for this request, consuming one of its `count`. */
  fire(method: string, path: string): Fault | undefined {
    if (this.faults.length === 0) return undefined; // the hot path pays one length check
    for (const fault of this.faults) {
      if (fault.method && fault.method !== method) continue;
      if (!path.startsWith(fault.path)) continue;
      if (fault.probability !== undefined && this.random() >= fault.probability) continue;
      if (fault.count !== undefined) {
        fault.count -= 1;
        if (fault.count <= 0) this.faults = this.faults.filter((f) => f !== fault);
      }
      return { ...fault };
    }
    return undefined;
  }
}

/** Applies a firing fault: wait, then drop the socket, answer with the status, or carry on. */
export function faultMiddleware(faults: FaultList): RequestHandler {
  return (req, res, next) => {
    const fault = faults.fire(req.method, req.path);
    if (!fault) return next();
    const act = () => {
      if (fault.dropConnection) {
        req.socket.destroy();
        return;
      }
      if (fault.status !== null) {
        if (fault.retryAfter !== undefined) res.set("Retry-After", String(fault.retryAfter));
        res
          .status(fault.status)
          .type("application/json; charset=utf-8")
          .send(JSON.stringify({ message: "Injected fault" }));
        return;
      }
      next();
    };
    if (fault.delayMs === 0) return act();
    const timer = setTimeout(() => {
      faults.pendingDelays.delete(timer);
      act();
    }, fault.delayMs);
    faults.pendingDelays.add(timer);
  };
}

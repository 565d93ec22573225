import { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Express } from "express";
import { bindableToLogContext } from "../logging/logger.js";

/**
 * node:http request and response classes whose instances are born with the Express app's
 * prototypes (`app.request`, `app.response`). Express gives every request and response its own
 * prototype on arrival (`Object.setPrototypeOf` in `app.handle`), and V8 answers a prototype swap by
 * dropping the object off its fast paths: on this machine that swap alone cost about 60 µs of CPU
 * per request (docs/performance.md). When the prototype is already the app's, Express's swap is a
 * no-op. It matters for the surfaces Express serves (admin UI and API, health, metrics); the SCIM
 * server runs without Express and never swaps. Both are also born ready for their request's log
 * context (`bindableToLogContext`), so that binding them to it (src/http/requestContext.ts) changes
 * no shape. The server is created before the app (its port goes into the app's public URL), so
 * `adopt` hands the app's prototypes over once it exists; requests made before that get node's own.
 */
export type ServerClasses = {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
  adopt(app: Express): void;
};

type Init<A extends unknown[]> = (this: unknown, ...args: A) => void;

export function serverClasses(): ServerClasses | undefined {
  // Node's two constructors are plain functions that can initialise an object made elsewhere; if a
  // Node version makes them classes, keep node's own (correct, only slower).
  if (/^class\b/.test(Function.prototype.toString.call(IncomingMessage))) return undefined;
  if (/^class\b/.test(Function.prototype.toString.call(ServerResponse))) return undefined;
  function AppRequest(this: unknown, socket: Socket): void {
    (IncomingMessage as unknown as Init<[Socket]>).call(this, socket);
    bindableToLogContext(this as IncomingMessage);
  }
  function AppResponse(this: unknown, req: IncomingMessage, options?: unknown): void {
    (ServerResponse as unknown as Init<[IncomingMessage, unknown]>).call(this, req, options);
    bindableToLogContext(this as ServerResponse);
  }
  AppRequest.prototype = IncomingMessage.prototype;
  AppResponse.prototype = ServerResponse.prototype;
  return {
    IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof ServerResponse,
    adopt(app) {
      AppRequest.prototype = app.request;
      AppResponse.prototype = app.response;
    },
  };
}

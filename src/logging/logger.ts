import { AsyncLocalStorage } from "node:async_hooks";
import { EventEmitter } from "node:events";
import winston from "winston";

/**
 * One logger for the whole process. Call sites pass a category, a constant message and
 * structured fields: `log.info("scim", "user created", { userId })`. The request id (or
 * reconcile id) of the current async context is added to every line, and fields whose names
 * look like secrets are scrubbed here, centrally, so no call site can leak one.
 */

type Context = {
  requestId?: string;
  reconcileId?: string;
  /** The HTTP response of the request this code runs for (src/http/requestContext.ts): one store per request, not two. */
  response?: object;
};
const contextStore = new AsyncLocalStorage<Context>();

export function withLogContext<A extends unknown[], T>(context: Context, fn: (...args: A) => T, ...args: A): T {
  const outer = contextStore.getStore();
  return contextStore.run(outer ? { ...outer, ...context } : context, fn, ...args);
}

/**
 * Runs `fn` outside any log context: for events that belong to no request or reconcile although
 * they arrive in the async context of the one that happened to start them (a pooled connection
 * dropped later, long after the request that opened it).
 */
export function withoutLogContext<T>(fn: () => T): T {
  return contextStore.exit(fn);
}

/** Where an emitter bound by `bindLogContext` keeps its context. */
const BOUND_CONTEXT: unique symbol = Symbol("boundLogContext");
type Bindable = EventEmitter & { [BOUND_CONTEXT]?: Context | undefined };
const plainEmit = EventEmitter.prototype.emit;

/**
 * Makes every event of `emitter` run in the log context current now, whichever async context
 * emits it. A request's body arrives in later socket reads, whose callbacks run in the context of
 * the connection, not of the request: without this a parser's or stream's listener that throws
 * there would look like a failure outside any request (src/processGuards.ts). The emitter keeps
 * its context in a slot and emits through one shared function: no closure per emitter, no array
 * per event, and an emitter born with `bindableToLogContext` (the HTTP server's request and
 * response, src/http/serverClasses.ts) changes no shape when bound.
 */
export function bindLogContext(emitter: EventEmitter): void {
  const context = contextStore.getStore();
  if (!context) return;
  if (emitter.emit !== emitInBoundContext) {
    // An emitter with an emit of its own keeps it, wrapped (node's requests and responses have none).
    if (emitter.emit !== plainEmit) return bindOwnEmit(emitter, context);
    emitter.emit = emitInBoundContext;
  }
  (emitter as Bindable)[BOUND_CONTEXT] = context;
}

/** For a constructor: gives `emitter` at birth what `bindLogContext` would add, unbound until then. */
export function bindableToLogContext(emitter: EventEmitter): void {
  emitter.emit = emitInBoundContext;
  (emitter as Bindable)[BOUND_CONTEXT] = undefined;
}

function emitInBoundContext(this: Bindable): boolean {
  const context = this[BOUND_CONTEXT];
  // `arguments` handed on as they came (V8 passes them without building an array).
  const args = arguments as unknown as Parameters<EventEmitter["emit"]>;
  if (context === undefined || contextStore.getStore() === context) return Reflect.apply(plainEmit, this, args);
  return contextStore.run(context, emitThrowingInContext, this, plainEmit, args);
}

function bindOwnEmit(emitter: EventEmitter, context: Context): void {
  const emit = emitter.emit;
  emitter.emit = function (this: EventEmitter, ...args: Parameters<EventEmitter["emit"]>): boolean {
    if (contextStore.getStore() === context) return emit.apply(this, args);
    return contextStore.run(context, emitThrowingInContext, this, emit, args);
  };
}

function emitThrowingInContext(
  emitter: EventEmitter,
  emit: EventEmitter["emit"],
  args: Parameters<EventEmitter["emit"]>,
): boolean {
  try {
    return Reflect.apply(emit, emitter, args);
  } catch (error) {
    // An exception unwinding out of run() would reach the process handler in the emitter's
    // context, not this one: thrown again from a tick of this context, it fails its request.
    process.nextTick(() => {
      throw error;
    });
    return false;
  }
}

export function currentLogContext(): Context {
  return contextStore.getStore() ?? {};
}

const SECRET_KEY =
  /token|secret|password|authorization|cookie|apikey|api_key|assertion|samlresponse|cert|hash|webhook_?url|smtp_?url/i;
const TRUNCATE_KEY = /html|body/i;
const MAX_FIELD_CHARS = 500;
// Emails in any logged string (an error detail can echo a filter or a PATCH path) keep only the
// first character of the local part, as actorForLog does; the database logs keep the full name.
const EMAIL = /([A-Za-z0-9._%+-])[A-Za-z0-9._%+-]*@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/g;

// Secret values known at boot (notification webhook URLs carry their token in the URL itself):
// replaced wherever they appear in a logged string, whatever the field is called.
const secretValues = new Set<string>();

/** Registers a secret value (at least 8 characters) to be replaced by [redacted] in every log line. */
export function registerSecretValue(value: string): void {
  if (value.length >= 8) secretValues.add(value);
}

function scrubText(value: string): string {
  let text = value;
  for (const secret of secretValues) if (text.includes(secret)) text = text.split(secret).join("[redacted]");
  text = text.length > MAX_FIELD_CHARS ? `${text.slice(0, MAX_FIELD_CHARS)}…` : text;
  return text.replace(EMAIL, "$1…@$2");
}

export function scrub(value: unknown, depth = 0): unknown {
  if (depth > 6) return "[deep]";
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => scrub(v, depth + 1));
  if (value instanceof Error) return { name: value.name, message: scrubText(value.message) };
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (SECRET_KEY.test(key)) out[key] = "[redacted]";
      else if (TRUNCATE_KEY.test(key) && typeof inner === "string" && inner.length > 80)
        out[key] = scrubText(`${inner.slice(0, 80)}…`);
      else out[key] = scrub(inner, depth + 1);
    }
    return out;
  }
  if (typeof value === "string") return scrubText(value);
  return value;
}

const addContext = winston.format((info) => {
  const context = contextStore.getStore();
  if (context?.requestId) info.requestId = context.requestId;
  if (context?.reconcileId) info.reconcileId = context.reconcileId;
  return info;
});

function createWinston(): winston.Logger {
  const production = process.env.NODE_ENV === "production";
  const level = process.env.LOG_LEVEL ?? (process.env.NODE_ENV === "test" ? "warn" : "info");
  return winston.createLogger({
    level,
    format: winston.format.combine(
      addContext(),
      winston.format.timestamp(),
      production
        ? winston.format.json()
        : winston.format.printf(({ timestamp, level: lvl, category, message, ...rest }) => {
            const fields = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : "";
            return `${String(timestamp)} ${lvl} [${String(category)}] ${String(message)}${fields}`;
          }),
    ),
    transports: [
      new winston.transports.Console({ stderrLevels: ["error", "warn", "info", "http", "verbose", "debug", "silly"] }),
    ],
  });
}

let winstonLogger = createWinston();

/**
 * Whether a line at `level` would be written. Checked before any work on the fields (scrubbing,
 * winston's stream pipeline), here and by callers whose fields cost something to build: a debug
 * line on every request must cost nothing at level warn.
 */
export function isLogLevelEnabled(level: string): boolean {
  return winstonLogger.isLevelEnabled(level);
}

/** Replaces the transports, for tests that capture log output. */
export function setLogTransport(transport: winston.transport): void {
  winstonLogger.clear();
  winstonLogger.add(transport);
}

export function setLogLevel(level: string): void {
  winstonLogger.level = level;
}

type Fields = Record<string, unknown>;
function write(level: string, category: string, message: string, fields?: Fields): void {
  if (!isLogLevelEnabled(level)) return;
  winstonLogger.log({ level, category, message, ...(fields ? (scrub(fields) as Fields) : {}) });
}

export const log = {
  error: (category: string, message: string, fields?: Fields) => write("error", category, message, fields),
  warn: (category: string, message: string, fields?: Fields) => write("warn", category, message, fields),
  info: (category: string, message: string, fields?: Fields) => write("info", category, message, fields),
  debug: (category: string, message: string, fields?: Fields) => write("debug", category, message, fields),
};

export function resetLogger(): void {
  winstonLogger = createWinston();
}

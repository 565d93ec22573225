import { describe, expect, it } from "vitest";
import type { HttpOutcome } from "../../src/platform/transport.js";
import {
  classifyCall,
  defaultQuarantineRules,
  emptyWindow,
  probeVerdict,
  recordCall,
  tripOf,
  type CallClass,
  type CallWindow,
} from "../../src/platform/quarantineRules.js";

const rules = defaultQuarantineRules;
const httpError = (status: number): HttpOutcome => ({ kind: "http_error", status, body: undefined, attempts: 1 });

function replay(calls: CallClass[], r = rules): CallWindow {
  return calls.reduce((w, c) => recordCall(w, c, r), emptyWindow);
}
const times = (n: number, c: CallClass): CallClass[] => Array.from({ length: n }, () => c);

describe("classifyCall", () => {
  it.each<[string, HttpOutcome, CallClass]>([
    ["2xx", { kind: "ok", status: 200, body: undefined, headers: new Headers(), attempts: 1 }, "ok"],
    ["401", httpError(401), "auth"],
    ["403", httpError(403), "auth"],
    ["404 (the platform answering about one user)", httpError(404), "ok"],
    ["409", httpError(409), "ok"],
    ["400", httpError(400), "ok"],
    ["408", httpError(408), "failure"],
    ["500", httpError(500), "failure"],
    ["503", httpError(503), "failure"],
    ["timeout", { kind: "uncertain", reason: "timeout", attempts: 1 }, "failure"],
    ["dropped connection", { kind: "uncertain", reason: "ECONNRESET", attempts: 1 }, "failure"],
    ["unreachable", { kind: "unreachable", reason: "ECONNREFUSED", attempts: 1 }, "failure"],
    ["429 (its own pause)", { kind: "rate_limited", until: new Date(), sent: true, attempts: 1 }, "ignored"],
  ])("%s", (_name, outcome, expected) => {
    expect(classifyCall(outcome)).toBe(expected);
  });
});

describe("tripOf", () => {
  it.each<[string, CallClass[], string | undefined]>([
    ["nothing yet", [], undefined],
    ["4 consecutive auth failures", times(4, "auth"), undefined],
    ["5 consecutive auth failures", times(5, "auth"), "auth"],
    ["auth streak broken by a success", [...times(4, "auth"), "ok", ...times(4, "auth")], undefined],
    ["9 failures: under the minimum of 10 calls", times(9, "failure"), undefined],
    ["10 failures out of 10", times(10, "failure"), "failure_rate"],
    ["5 failures of 10 (50%)", [...times(5, "ok"), ...times(5, "failure")], "failure_rate"],
    ["4 failures of 10", [...times(6, "ok"), ...times(4, "failure")], undefined],
    [
      "9 failures of the last 20 (older ones slid out)",
      [...times(30, "failure"), ...times(11, "ok"), ...times(9, "failure")],
      undefined,
    ],
    [
      "auth refusals count toward the failure rate",
      [...times(4, "auth"), "ok", ...times(4, "auth"), "ok", "failure", "ok"],
      "failure_rate",
    ],
    ["ignored calls change nothing", [...times(4, "auth"), "ignored", "auth"], "auth"],
  ])("%s", (_name, calls, expected) => {
    expect(tripOf(replay(calls), rules)?.reason).toBe(expected);
  });

  it("disabled rules never trip; 0 turns one rule off", () => {
    expect(tripOf(replay(times(20, "auth")), { ...rules, enabled: false })).toBeUndefined();
    expect(tripOf(replay(times(6, "auth")), { ...rules, authFailures: 0 })).toBeUndefined();
    expect(tripOf(replay(times(20, "failure")), { ...rules, failureRatePercent: 0 })).toBeUndefined();
  });

  it("says why in words", () => {
    expect(tripOf(replay(times(5, "auth")), rules)?.detail).toBe("5 consecutive calls refused with 401/403");
    expect(tripOf(replay([...times(6, "ok"), ...times(6, "failure")]), rules)?.detail).toMatch(
      /^6 of the last 12 calls failed/,
    );
  });
});

describe("probeVerdict", () => {
  it.each<[CallClass, string]>([
    ["ok", "resume"],
    ["auth", "extend"],
    ["failure", "extend"],
    ["ignored", "undecided"],
  ])("%s → %s", (call, verdict) => {
    expect(probeVerdict(call)).toBe(verdict);
  });
});

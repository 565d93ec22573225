import { describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { recogniseColumns } from "../../src/platformRecord/columns.js";
import {
  eventFingerprint,
  parseEventTime,
  readSecurityEvents,
  UnrecognisedReportError,
} from "../../src/platformRecord/csv.js";

/** The Security Event report read: columns by header, times, rows skipped by line, one fingerprint per event. */
describe("recogniseColumns", () => {
  it.each([
    // The emulator's own layout.
    [
      ["Time (UTC)", "Actor", "Event", "Account", "IP Address", "Details"],
      {},
      { time: 0, actor: 1, event: 2, account: 3, ip: 4, details: 5 },
    ],
    // Case, spaces and a byte-order mark do not matter; order does not either.
    [["  EVENT TYPE ", "\uFEFFtimestamp", "user  email"], {}, { event: 0, time: 1, actor: 2 }],
    [["Date/Time", "Action", "Target User", "Source IP"], {}, { time: 0, event: 1, account: 2, ip: 3 }],
    [["Occurred at", "Activity", "Performed by", "Description"], {}, { time: 0, event: 1, actor: 2, details: 3 }],
    // Of two headers for one field, the earlier synonym wins; the other may serve another field.
    [["Date", "Time", "Type", "Event", "Email"], {}, { time: 1, event: 3, account: 4 }],
    [["User", "User Email", "Created At", "Event"], {}, { actor: 0, time: 2, event: 3 }],
    [["Developer", "Developer Email", "Date", "Event"], {}, { actor: 0, account: 1, time: 2, event: 3 }],
    // SECURITY_EVENTS_COLUMNS names them where the layout differs, and wins over the synonyms.
    [
      ["When", "Who", "What", "Whom", "From", "Notes"],
      { time: "when", actor: "Who", event: "What", account: "Whom", ip: "From", details: "Notes" },
      { time: 0, actor: 1, event: 2, account: 3, ip: 4, details: 5 },
    ],
    [["Time", "Happened", "Event", "Actor"], { time: "Happened" }, { time: 1, event: 2, actor: 3 }],
  ] as const)("%j %j → %j", (headers, names, columns) => {
    expect(recogniseColumns(headers, names)).toEqual({ ok: true, columns });
  });

  it.each([
    [["Name", "Email", "Role"], {}, "no column for a time, an event"],
    [["Time", "Event"], {}, "no column for an actor or an account"],
    [["Time", "Actor", "Account"], {}, "no column for an event"],
    [["Time;Event;Actor"], {}, "no column for a time, an event, an actor or an account"],
    [["Time", "Event", "Actor"], { time: "When" }, 'SECURITY_EVENTS_COLUMNS names time="When"'],
  ] as const)("%j %j is refused: %s", (headers, names, problem) => {
    const result = recogniseColumns(headers, names);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem).toContain(problem);
    expect(result.found).toEqual(headers);
    expect(result.lookedFor).toContain("event type");
  });
});

describe("parseEventTime", () => {
  it.each([
    ["2026-12-06T10:02:03.456Z", "2026-12-06T10:02:03.456Z"],
    ["2026-12-06T10:02:03Z", "2026-12-06T10:02:03.000Z"],
    ["2026-12-06T12:02:03.456+02:00", "2026-12-06T10:02:03.456Z"],
    ["2026-12-06T05:02:03-0500", "2026-12-06T10:02:03.000Z"],
    ["2026-12-06 10:02", "2026-12-06T10:02:00.000Z"],
    ["2026-12-06 10:02:03", "2026-12-06T10:02:03.000Z"],
    ["2026-12-06 10:02:03.4", "2026-12-06T10:02:03.400Z"],
    ["2026-12-06 10:02:03.123456", "2026-12-06T10:02:03.123Z"],
    ["2026-12-06 10:02:03 UTC", "2026-12-06T10:02:03.000Z"],
    ["2026-12-06 10:02:03 gmt", "2026-12-06T10:02:03.000Z"],
    ["2026-12-06 10:02:03Z", "2026-12-06T10:02:03.000Z"],
    ["  2026-12-06T10:02:03  ", "2026-12-06T10:02:03.000Z"],
  ])("%j → %s", (raw, iso) => {
    expect(parseEventTime(raw)?.toISOString()).toBe(iso);
  });

  it.each([
    "",
    "yesterday",
    "06/12/2026 10:02",
    "2026-12-06",
    "2026-02-30 10:00",
    "2026-12-06 24:00",
    "2026-12-06 10:60",
    "2026-12-06T10:02:03+25:00",
    "2026-12-06 10:02 PST",
    "1765015323",
  ])("%j is not a time", (raw) => {
    expect(parseEventTime(raw)).toBeUndefined();
  });
});

const HEADER = "Time (UTC),Actor,Event,Account,IP Address,Details\r\n";

describe("readSecurityEvents", () => {
  it("reads the emulator's layout, with a byte-order mark, quoted fields and CRLF, newest first", () => {
    const text =
      "\uFEFF" +
      HEADER +
      '2026-12-06T10:02:00.000Z,ops-admin@example.com,Updated Account Permission,Kate@Example.com ,10.0.0.1,"export_user_data, view_segments"\r\n' +
      '2026-12-06T09:00:00.000Z,ops-admin@example.com,Added  Account,new@example.com,,"a ""quoted""\r\nline"\r\n' +
      "2026-12-06T08:00:00.000Z,kate@example.com,Signed In,,10.0.0.2,\r\n";
    const report = readSecurityEvents(text);
    expect(report.skipped).toEqual([]);
    expect(report.rows).toBe(3);
    expect(
      report.events.map(({ fingerprint, ...e }) => ({ ...e, at: e.at.toISOString(), fp: fingerprint.length })),
    ).toEqual([
      {
        at: "2026-12-06T10:02:00.000Z",
        actor: "ops-admin@example.com",
        event: "Updated Account Permission",
        kind: "permissions-changed",
        account: "kate@example.com",
        ip: "10.0.0.1",
        details: "export_user_data, view_segments",
        line: 2,
        fp: 64,
      },
      {
        at: "2026-12-06T09:00:00.000Z",
        actor: "ops-admin@example.com",
        event: "Added Account",
        kind: "account-added",
        account: "new@example.com",
        ip: null,
        details: 'a "quoted"\r\nline',
        line: 3,
        fp: 64,
      },
      {
        at: "2026-12-06T08:00:00.000Z",
        actor: "kate@example.com",
        event: "Signed In",
        kind: "signed-in",
        account: null,
        ip: "10.0.0.2",
        details: null,
        line: 5,
        fp: 64,
      },
    ]);
  });

  it("names each row that does not read by its line and reads the rest", () => {
    const text =
      HEADER +
      "2026-12-06T10:00:00Z,a@example.com,Added Account,x@example.com,,\r\n" +
      "\r\n" +
      "not a time,a@example.com,Added Account,y@example.com,,\r\n" +
      "2026-12-06T10:00:00Z,a@example.com,Added Account\r\n" +
      "2026-12-06T10:00:00Z,a@example.com,  ,z@example.com,,\r\n" +
      ",a@example.com,Added Account,z@example.com,,\r\n" +
      '2026-12-06T11:00:00Z,a@example.com,Removed Account,w@example.com,,"b"x\r\n' +
      '2026-12-06T12:00:00Z,a@example.com,Removed Account,v@example.com,,"never closed\r\n' +
      "2026-12-06T13:00:00Z,a@example.com,Removed Account,u@example.com,,\r\n";
    const report = readSecurityEvents(text);
    expect(report.skipped).toEqual([
      { line: 4, reason: 'the time "not a time" is not a time' },
      { line: 5, reason: "has 3 field(s); the header has 6" },
      { line: 6, reason: "no event" },
      { line: 7, reason: "no time" },
      { line: 9, reason: expect.stringContaining("never closed") },
    ]);
    expect(report.events.map((e) => [e.line, e.account])).toEqual([
      [2, "x@example.com"],
      [8, "w@example.com"],
    ]);
    expect(report.rows).toBe(7);
  });

  it("refuses a file that is not the report, naming the headers found and those looked for", () => {
    const attempt = () => readSecurityEvents("Name,Email,Role\r\nKate,kate@example.com,admin\r\n");
    expect(attempt).toThrow(UnrecognisedReportError);
    expect(attempt).toThrow(/Headers found: "Name", "Email", "Role"\. Looked for time: time, time \(utc\)/);
    expect(() => readSecurityEvents("")).toThrow(/empty/);
    expect(
      () =>
        readSecurityEvents("When,What,Who\r\n2026-12-06T10:00:00Z,Signed In,kate@example.com\r\n", {
          time: "When",
          event: "What",
          actor: "Who",
        }).events,
    ).not.toThrow();
  });

  it("fingerprints the normalised event: the same event from two reports is one, another differs", () => {
    const base = {
      at: new Date("2026-12-06T10:00:00.000Z"),
      actor: "Ops-Admin@example.com",
      event: "Added Account",
      account: "kate@example.com",
      ip: "10.0.0.1",
      details: null,
    };
    const manual = readSecurityEvents(
      `${HEADER}2026-12-06T10:00:00.000Z,Ops-Admin@example.com,Added Account,KATE@example.com,10.0.0.1,\r\n`,
    ).events[0]!;
    const exported = readSecurityEvents(
      "Date,User,Action,Email,IP,Details\n2026-12-06 10:00:00 UTC,ops-admin@example.com,added account,kate@example.com,10.0.0.1,\n",
    ).events[0]!;
    expect(manual.fingerprint).toBe(exported.fingerprint);
    expect(manual.fingerprint).toBe(eventFingerprint(base));
    expect(eventFingerprint({ ...base, at: new Date("2026-12-06T10:00:00.001Z") })).not.toBe(manual.fingerprint);
    expect(eventFingerprint({ ...base, account: null, details: "kate@example.com" })).not.toBe(manual.fingerprint);
  });
});

describe("the settings, checked at boot", () => {
  it.each([
    ["s3://security-events/braze/", { bucket: "security-events", prefix: "braze/" }],
    ["s3://security-events", { bucket: "security-events", prefix: "" }],
    ["s3://a.b-c/x/y", { bucket: "a.b-c", prefix: "x/y" }],
  ])("SECURITY_EVENTS_S3_URI=%s", (uri, location) => {
    expect(loadEnv({ SECURITY_EVENTS_S3_URI: uri }).SECURITY_EVENTS_S3_URI).toEqual(location);
  });

  it.each([
    "https://security-events.s3.amazonaws.com/braze",
    "s3://",
    "s3://Upper/x",
    "s3://ab",
    "security-events/braze",
  ])("SECURITY_EVENTS_S3_URI=%s stops the boot naming the fix", (uri) => {
    expect(() => loadEnv({ SECURITY_EVENTS_S3_URI: uri })).toThrow(
      /SECURITY_EVENTS_S3_URI: must be s3:\/\/BUCKET\/PREFIX/,
    );
  });

  it("SECURITY_EVENTS_COLUMNS names fields; a name that is not a field stops the boot", () => {
    expect(
      loadEnv({ SECURITY_EVENTS_COLUMNS: "time=Date, Event = Action ,account=Target" }).SECURITY_EVENTS_COLUMNS,
    ).toEqual({
      time: "Date",
      event: "Action",
      account: "Target",
    });
    expect(loadEnv({}).SECURITY_EVENTS_COLUMNS).toEqual({});
    expect(() => loadEnv({ SECURITY_EVENTS_COLUMNS: "when=Date" })).toThrow(
      /SECURITY_EVENTS_COLUMNS: "when=Date" is not FIELD=HEADER/,
    );
    expect(() => loadEnv({ SECURITY_EVENTS_COLUMNS: "time=" })).toThrow(/SECURITY_EVENTS_COLUMNS/);
    expect(() => loadEnv({ SECURITY_EVENTS_COLUMNS: "time=A,time=B" })).toThrow(/names time twice/);
    expect(loadEnv({}).PLATFORM_EVENTS_RETENTION_DAYS).toBe(400);
    expect(loadEnv({}).SECURITY_EVENTS_POLL_MINUTES).toBe(60);
    expect(() => loadEnv({ SECURITY_EVENTS_S3_ENDPOINT: "minio:9000" })).toThrow(/SECURITY_EVENTS_S3_ENDPOINT/);
  });
});

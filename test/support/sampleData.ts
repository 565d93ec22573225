import { presentRun } from "../../src/admin/runs/runs.js";
import type { AdminDataSources } from "../../src/http/admin/index.js";
import type { LogRow } from "../../src/admin/log.js";

/** Fixed, made-up page data for screenshots of the layout and components (not the reconciler's). */
export function sampleSources(): AdminDataSources {
  const day = (n: number) => new Date(Date.UTC(2026, 10, 7 + n)).toISOString().slice(0, 10);
  const rows: LogRow[] = [
    {
      id: "1",
      at: new Date("2026-11-20T09:15:00Z"),
      userName: "ada@example.com",
      action: "update",
      outcome: "succeeded",
      trigger: "added to group Engineering",
      platformStatus: 200,
      callsSpent: 1,
      actor: null,
    },
    {
      id: "2",
      at: new Date("2026-11-20T09:10:00Z"),
      userName: "bob@example.com",
      action: "deprovision",
      outcome: "held",
      trigger: "deactivated in the IdP",
      platformStatus: null,
      callsSpent: 0,
      actor: null,
    },
    {
      id: "3",
      at: new Date("2026-11-20T08:55:00Z"),
      userName: "cy@example.com",
      action: "create",
      outcome: "failed",
      trigger: "mapping change: rule Engineers get Product, line 12",
      platformStatus: 500,
      callsSpent: 1,
      actor: null,
    },
  ];
  const run = presentRun(
    {
      id: "r1",
      status: "succeeded",
      phase: "verify",
      dryRun: false,
      verify: true,
      trigger: "cron",
      actor: null,
      startedAt: new Date("2026-11-20T02:00:00Z"),
      finishedAt: new Date("2026-11-20T02:40:00Z"),
      cursor: null,
      orphanCursor: null,
      usersTotal: 1200,
      usersEvaluated: 1200,
      usersQueued: 3,
      verifyTotal: 900,
      verified: 900,
      drifted: 2,
      callsSpent: 902,
      planSummary: {},
      error: null,
    },
    null,
  );
  return {
    overview: async () => ({
      budget: { used: 1250, reserve: 500, limit: 5000, resetsAt: new Date("2026-11-21T00:00:00Z") },
      callsPerDay: Array.from({ length: 14 }, (_, i) => ({
        day: day(i),
        byAction: { deprovision: (i * 7) % 11, update: 40 + ((i * 13) % 30), create: (i * 5) % 17 },
      })),
      queue: [
        { priority: "remove access", depth: 3, settling: 0 },
        { priority: "creates", depth: 41, settling: 12 },
        { priority: "drift verification", depth: 1200, settling: 0 },
      ],
      queueEta: "about 6 hours at today's pace",
      failures: [
        { userId: "u-3", userName: "cy@example.com", error: "platform 500", at: new Date("2026-11-20T08:55:00Z") },
      ],
      held: { deprovisions: 2, emailChanges: 1 },
      mirrorLag: [{ table: "mirror.email_subscription_states", pending: 12, lagSeconds: 40 }],
      lastRuns: [run],
      quarantine: [],
      permissions: { mapping: "granular", platform: "granular", learnedAt: null, refusing: null, heldGrants: 0 },
    }),
    log: async () => ({
      rows,
      hasNext: false,
      actions: ["create", "update", "deprovision"],
      outcomes: ["succeeded", "failed", "held"],
      triggers: ["idp", "mapping", "resync"],
    }),
    logEntry: async (id) =>
      id === "1"
        ? {
            id: "1",
            at: rows[0]!.at,
            reconcileId: "rc-1",
            userId: "u-1",
            userName: "ada@example.com",
            action: "update",
            outcome: "succeeded",
            trigger: {
              kind: "idp",
              requestId: "req-42",
              method: "PATCH",
              resource: "Groups/5dbe7d8c-acfb-4191-aa34-932284491259",
              change: {
                what: "added-to-group",
                groupId: "5dbe7d8c-acfb-4191-aa34-932284491259",
                groupName: "Engineering",
              },
            },
            triggerLabel: "added to group Engineering",
            triggerFacts: [
              { label: "IdP group", value: "Engineering (5dbe7d8c-acfb-4191-aa34-932284491259)" },
              { label: "IdP request", value: "PATCH /scim/v2/Groups/5dbe7d8c-acfb-4191-aa34-932284491259" },
              { label: "Request id", value: "req-42" },
            ],
            before: {
              department: "Sales",
              company: ["basic_access"],
              workspaces: { Marketing: ["read", "campaigns"] },
            },
            after: {
              department: "Engineering",
              company: ["basic_access"],
              workspaces: { Marketing: ["read"], Product: ["read", "write"] },
            },
            changes: [],
            platformStatus: 200,
            platformCall: { method: "PUT", path: "/scim/v2/Users/p-981", status: 200 },
            why: ["read, write in Product — rule 'Engineers' (mapping.yaml:12) via Engineering"],
            callsSpent: 1,
            error: null,
            note: null,
            actor: null,
          }
        : undefined,
    logExport: async () => rows,
    users: async (query) => ({
      rows: [
        {
          id: "u-1",
          userName: "ada@example.com",
          active: true,
          groups: 3,
          lastReconciledAt: new Date("2026-11-20T09:15:00Z"),
          state: "in sync",
        },
        { id: "u-2", userName: "bob@example.com", active: false, groups: 0, lastReconciledAt: null, state: "held" },
      ].filter((u) => !query.q || u.userName.includes(query.q)),
      hasNext: false,
    }),
    user: async (id) =>
      id === "u-1"
        ? {
            id: "u-1",
            userName: "ada@example.com",
            active: true,
            idp: { name: { givenName: "Ada", familyName: "Lovelace" }, externalId: "00u1" },
            groups: ["eng", "all-staff"],
            matchedRules: [{ rule: "engineers", grants: "workspace Product: read, write" }],
            desired: { department: "Engineering", workspaces: { Product: ["read", "write"] } },
            lastApplied: { department: "Sales", workspaces: { Marketing: ["read"] } },
            queued: false,
            log: rows.slice(0, 1),
          }
        : undefined,
    mapping: async () => ({
      file: "config/mapping.yaml",
      source: "rules:\n  - name: engineers\n",
      rules: [{ name: "engineers", groups: "eng", grants: "workspace Product: read, write" }],
      applyInstructions: "Mappings are applied by editing MAPPING_FILE.",
      permissionModel: "granular",
      warnings: [],
      identifiers: [],
      renamed: [],
      editedInDashboard: [],
    }),
    notifications: async () => ({ channels: [], outbox: [] }),
    credentials: async () => [],
    previewMapping: async (draft) =>
      draft.includes("bad")
        ? {
            errors: ["rules[0].group: is required"],
            changes: [],
            usersAffected: 0,
            estimatedCalls: 0,
            durationLabel: "",
          }
        : {
            errors: [],
            changes: [
              {
                userName: "ada@example.com",
                gains: ["workspace Product: admin"],
                losses: ["workspace Marketing: read"],
              },
            ],
            usersAffected: 1,
            estimatedCalls: 1,
            durationLabel: "within today's budget",
          },
    runs: async () => ({ runs: [run], nextRunAt: new Date("2026-11-21T02:00:00Z") }),
    mirror: async () => ({
      tables: [
        {
          name: "email_subscriptions",
          pending: 12,
          lagSeconds: 40,
          lastPushAt: new Date("2026-11-20T09:00:00Z"),
          state: "ok",
        },
      ],
      parked: [
        {
          table: "email_subscriptions",
          key: "ada@example.com",
          error: "400 invalid email",
          parkedAt: new Date("2026-11-20T08:00:00Z"),
        },
      ],
    }),
    approvals: async () => ({
      held: [
        {
          id: "u-2",
          kind: "deprovision",
          userName: "bob@example.com",
          summary: "mass deprovision: 120 removals in 10 minutes",
          heldAt: new Date("2026-11-20T09:10:00Z"),
        },
        {
          id: "u-4",
          kind: "email_change",
          userName: "dee@example.com",
          summary: "dee@example.com → dee.smith@example.com",
          heldAt: new Date("2026-11-20T07:00:00Z"),
        },
      ],
    }),
  };
}

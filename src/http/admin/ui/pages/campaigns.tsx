import type { CampaignSummary } from "../../../../review/campaigns/index.js";
import { ActionButton, Badge, CsrfField, formatTime } from "../components/basics.js";
import { DataTable } from "../components/table.js";
import { can } from "../../../../policy.js";
import type { PageContext } from "../layout.js";

/** The Campaigns page: every campaign with its counts, and for admins the form that starts one. */

const SCOPE_WORDS: Record<string, (s: Record<string, unknown>) => string> = {
  everything: () => "everything",
  "company-admins": () => "company admins",
  workspace: (s) => `workspace ${String(s.workspace)}`,
  permission: (s) => `permission ${String(s.permission)}`,
  groups: (s) => `IdP groups ${(s.groups as string[]).join(", ")}`,
  "not-signed-in": (s) => `not signed in for ${String(s.days)} days`,
  unmanaged: () => "accounts made by hand in the dashboard",
};

export function scopeWords(scope: { kind: string }): string {
  return SCOPE_WORDS[scope.kind]?.(scope as Record<string, unknown>) ?? scope.kind;
}

/** `name:ann@example.com` → ann@example.com; `role:admin` → every admin. */
export function reviewerWords(key: string): string {
  if (key.startsWith("role:")) return `every ${key.slice(5)}`;
  return key.startsWith("name:") ? key.slice(5) : key;
}

export function CampaignsPage({ campaigns, ctx }: { campaigns: CampaignSummary[]; ctx: PageContext }) {
  return (
    <div>
      <p class="hint">
        Access certification campaigns: each freezes, when it starts, who holds what on the platform; reviewers keep or
        revoke each grant. A revoke removes the grant from the platform at once and keeps it off until the IdP stops
        granting it or an admin lifts the deny.
      </p>
      <DataTable
        rows={campaigns}
        empty="No campaign has been started."
        columns={[
          { label: "Name", cell: (c) => <a href={`${ctx.basePath}/campaigns/${c.id}`}>{c.name}</a> },
          { label: "Scope", cell: (c) => scopeWords(c.scope) },
          { label: "Due", cell: (c) => formatTime(c.dueAt), nowrap: true },
          { label: "Open", cell: (c) => c.counts.open, numeric: true },
          { label: "Kept", cell: (c) => c.counts.kept, numeric: true },
          { label: "Revoked", cell: (c) => c.counts.revoked, numeric: true },
          {
            label: "Status",
            cell: (c) =>
              c.closedAt ? (
                <Badge tone="neutral">closed {formatTime(c.closedAt)}</Badge>
              ) : (
                <Badge tone="info">open</Badge>
              ),
          },
        ]}
      />
      {can(ctx.actor.role, "campaign") ? <StartForm ctx={ctx} /> : null}
    </div>
  );
}

function StartForm({ ctx }: { ctx: PageContext }) {
  return (
    <section class="card" id="start">
      <h2>Start a campaign</h2>
      <form method="post" action={`${ctx.basePath}/campaigns`} class="stack">
        <CsrfField token={ctx.csrf} />
        <label class="form-row">
          <span>Name</span>
          <input type="text" name="name" required maxLength={200} />
        </label>
        <label class="form-row">
          <span>Scope</span>
          <select name="scope">
            <option value="everything">Everything</option>
            <option value="company-admins">Everyone with company admin</option>
            <option value="workspace">One workspace</option>
            <option value="permission">One permission</option>
            <option value="groups">The users of some IdP groups</option>
            <option value="not-signed-in">Accounts not signed in for N days (the platform's record)</option>
            <option value="unmanaged">Accounts made by hand in the dashboard (not managed by the IdP)</option>
          </select>
        </label>
        <label class="form-row">
          <span>Workspace, permission, groups or days</span>
          <input type="text" name="scopeValue" maxLength={2000} placeholder="for groups: names separated by commas" />
        </label>
        <label class="form-row">
          <span>Due (UTC)</span>
          <input type="datetime-local" name="dueAt" required />
        </label>
        <label class="form-row">
          <span>Reviewers</span>
          <textarea name="reviewers" rows={4} placeholder={"EU Production = eu.owner@example.com\nrole:admin"} />
        </label>
        <p class="hint">
          One per line: <code>workspace = reviewer</code> for a workspace's items, or a reviewer alone for every item
          the lines above it leave. A reviewer is a SAML NameID (their email), or <code>role:admin</code> /{" "}
          <code>role:viewer</code> for everyone with that role. The first line that matches an item decides.
        </p>
        <label class="form-row">
          <span>Fallback reviewer</span>
          <input type="text" name="fallbackReviewer" required maxLength={320} placeholder="security@example.com" />
        </label>
        <p>
          <button type="submit" class="button">
            Start the campaign
          </button>
        </p>
      </form>
    </section>
  );
}

/** Closes the campaign (admins): the button on its page. */
export function CloseCampaignButton({ id, ctx, undecided }: { id: string; ctx: PageContext; undecided: string }) {
  return (
    <ActionButton
      action={`${ctx.basePath}/campaigns/${id}/close`}
      csrf={ctx.csrf}
      label={`Close the campaign now (undecided items are ${undecided})`}
      danger
    />
  );
}

import type { AccessPageData, AccessRow } from "../../../../review/access/index.js";
import { bundleOrigin, describeReason } from "../../../../review/access/grants.js";
import { Badge, CsrfField, formatTime, Section } from "../components/basics.js";
import { FilterForm } from "../components/filterForm.js";
import { can } from "../../../../policy.js";
import { DataTable } from "../components/table.js";
import type { PageContext } from "../layout.js";

/** The form's fields as they arrive (strings; `at` is a datetime-local value, UTC). */
export type AccessForm = Partial<
  Record<
    "at" | "user" | "workspace" | "team" | "permission" | "group" | "rule" | "admins" | "cursor" | "totals",
    string
  >
>;

export const ACCESS_FORM_FIELDS = ["at", "user", "workspace", "team", "permission", "group", "rule", "admins"] as const;

const SCOPE_LABEL: Record<AccessRow["scope"], string> = {
  company: "company",
  role: "role",
  workspace: "workspace",
  permissionSet: "permission set",
  team: "team",
  department: "department",
};

function where(row: AccessRow): string {
  return [row.workspace, row.team].filter(Boolean).join(" › ") || "—";
}

export function AccessPage({
  data,
  form,
  evidence,
  ctx,
}: {
  data: AccessPageData;
  form: AccessForm;
  evidence: { signingKey: boolean };
  ctx: PageContext;
}) {
  const base = `${ctx.basePath}/access`;
  const kept = new URLSearchParams(ACCESS_FORM_FIELDS.flatMap((k) => (form[k] ? [[k, form[k]!]] : [])));
  const link = (extra: Record<string, string>) =>
    `?${new URLSearchParams({ ...Object.fromEntries(kept), ...extra }).toString()}`;
  const asOf = data.query.at ? `as of ${formatTime(data.query.at)}` : "now";
  return (
    <div>
      <p class="hint">
        Who holds what on the platform {asOf}, and why: each grant with the IdP groups and mapping rules that give it,
        when the platform first held it, and the last verification. Read from the connector's database only (no platform
        call).
      </p>
      {data.query.at ? (
        <p class="hint">
          As of a past moment, the reasons are those recorded when the reconciler applied the state in force then. Rows
          marked <em>today's rules</em> were applied before reasons were recorded: theirs come from today's mapping and
          IdP groups.
        </p>
      ) : null}
      <FilterForm
        action={base}
        fields={[
          { kind: "datetime", name: "at", label: "As of (UTC)", value: form.at },
          { kind: "text", name: "user", label: "User", value: form.user, placeholder: "userName" },
          { kind: "text", name: "workspace", label: "Workspace", value: form.workspace },
          { kind: "text", name: "team", label: "Team", value: form.team },
          { kind: "text", name: "permission", label: "Permission", value: form.permission },
          { kind: "text", name: "group", label: "IdP group", value: form.group },
          { kind: "text", name: "rule", label: "Rule", value: form.rule, placeholder: "line or description" },
        ]}
      />
      <p class="hint">
        <a href={`${base}?${new URLSearchParams({ admins: "true", ...(form.at ? { at: form.at } : {}) }).toString()}`}>
          Admins everywhere
        </a>{" "}
        · Export this view: <a href={`${base}/export.csv${link({})}`}>CSV</a> ·{" "}
        <a href={`${base}/export.json${link({})}`}>JSON</a>
      </p>
      <DataTable
        rows={data.rows}
        empty="No grant matches these filters."
        columns={[
          {
            label: "User",
            cell: (r) => (
              <span>
                {r.userName}
                {r.suspended ? (
                  <>
                    <br />
                    <Badge tone="warn">suspended</Badge> <span class="hint">{r.suspended}</span>
                  </>
                ) : null}
              </span>
            ),
          },
          {
            label: "Grant",
            cell: (r) => (
              <span>
                <Badge>{SCOPE_LABEL[r.scope]}</Badge>{" "}
                {r.bundle ? <Bundle permissions={r.permissions} from={r.permission} /> : <code>{r.permission}</code>}
                {r.deny ? <DenyNote deny={r.deny} ctx={ctx} /> : null}
                {r.outside ? (
                  <>
                    <br />
                    <Badge tone="warn">outside the connector</Badge> <span class="hint">{r.outside}</span>
                  </>
                ) : null}
              </span>
            ),
          },
          { label: "Workspace › team", cell: where },
          {
            label: "Why",
            cell: (r) =>
              r.reasons.length ? (
                <ul class="plain-list">
                  {r.reasons.map((reason) => (
                    <li>{describeReason(reason)}</li>
                  ))}
                  {data.query.at && r.reasonsAsOf === "current" ? (
                    <li>
                      <Badge tone="warn">today's rules</Badge>
                    </li>
                  ) : null}
                </ul>
              ) : (
                <span class="hint">
                  no rule in force gives it
                  {r.appliedByLogId ? (
                    <>
                      {" "}
                      · <a href={`${ctx.basePath}/log/${r.appliedByLogId}`}>applied by log entry {r.appliedByLogId}</a>
                    </>
                  ) : null}
                </span>
              ),
          },
          {
            label: "Held since",
            cell: (r) =>
              r.firstAppliedAt
                ? formatTime(r.firstAppliedAt)
                : r.deny && !r.deny.onPlatform
                  ? "not held (denied)"
                  : "before the log's retention",
            nowrap: true,
          },
          {
            label: "Last sign-in",
            cell: (r) => (r.lastSignInAt ? formatTime(r.lastSignInAt) : <span class="hint">none recorded</span>),
            nowrap: true,
          },
          {
            label: "Verified",
            cell: (r) =>
              r.verifiedAt ? (
                formatTime(r.verifiedAt)
              ) : r.deny && !r.deny.onPlatform ? (
                "—"
              ) : (
                <Badge tone="warn">not verified yet</Badge>
              ),
            nowrap: true,
          },
        ]}
      />
      {data.nextCursor ? (
        <nav class="pager" aria-label="Pages">
          <span />
          <a href={link({ cursor: data.nextCursor })}>Next →</a>
        </nav>
      ) : null}
      {can(ctx.actor.role, "evidence") ? <EvidenceForm signingKey={evidence.signingKey} ctx={ctx} /> : null}
      <Section title="Totals per workspace × permission">
        {data.totals === null ? (
          <p>
            <a href={link({ totals: "1" })}>Count users per workspace × permission</a>{" "}
            <span class="hint">(reads every account of this view)</span>
          </p>
        ) : (
          <DataTable
            rows={data.totals}
            empty="No permission is held."
            columns={[
              { label: "Workspace", cell: (t) => t.workspace ?? "(company)" },
              { label: "Permission", cell: (t) => <code>{t.permission}</code> },
              { label: "Users", cell: (t) => t.users, numeric: true },
            ]}
          />
        )}
      </Section>
      <Section title="Differences to explain">
        <DataTable
          rows={data.differences.accounts}
          empty="Every account was created by the connector and none drifted at the last verifying resync."
          columns={[
            { label: "User", cell: (d) => d.userName },
            {
              label: "Difference",
              cell: (d) =>
                d.kind === "drift"
                  ? "drifted from what was applied (last verifying resync)"
                  : "not created by the connector (adopted)",
            },
            { label: "Seen", cell: (d) => formatTime(d.at), nowrap: true },
          ]}
        />
        <DataTable
          rows={data.differences.unmanaged}
          empty="No account made by hand is known on the platform."
          caption="Not managed by the IdP (made by hand on the platform)"
          columns={[
            { label: "Account", cell: (u) => u.userName },
            { label: "Holds", cell: (u) => u.holds.join("; ") || "(nothing)" },
            { label: "Added by", cell: (u) => u.addedBy ?? "—" },
            { label: "First seen", cell: (u) => formatTime(u.firstSeen), nowrap: true },
          ]}
        />
        <DataTable
          rows={data.differences.held}
          empty="No action is held for approval."
          caption="Held for approval"
          columns={[
            { label: "User", cell: (h) => h.userName ?? h.userId },
            {
              label: "Held",
              cell: (h) => (h.kind === "deprovision" ? "deprovision (mass-deprovision breaker)" : "email change"),
            },
            { label: "Since", cell: (h) => formatTime(h.createdAt), nowrap: true },
          ]}
        />
      </Section>
    </div>
  );
}

/**
 * A granular bundle (what one rule gives in one workspace or team): its size and origin, its strings
 * folded ("45 permissions from rule 'EU marketers'").
 */
function Bundle({ permissions, from }: { permissions: readonly string[]; from: string }) {
  const n = permissions.length;
  return (
    <details class="bundle">
      <summary>
        {n} permission{n === 1 ? "" : "s"} {bundleOrigin(from)}
      </summary>
      <code>{permissions.join(" ")}</code>
    </details>
  );
}

/** A denied grant: "revoked in campaign …, by …, on …", linked to the campaign. */
function DenyNote({ deny, ctx }: { deny: NonNullable<AccessRow["deny"]>; ctx: PageContext }) {
  return (
    <span class="deny">
      <br />
      <Badge tone="bad">{deny.onPlatform ? "revoked, removal queued" : "revoked"}</Badge>{" "}
      {deny.campaignId ? <a href={`${ctx.basePath}/campaigns/${deny.campaignId}`}>{deny.words}</a> : deny.words}
      <span class="hint"> · {deny.comment}</span>
    </span>
  );
}

/**
 * The evidence pack download (admins): a POST form with the CSRF token, so no other site can make
 * an admin's browser write packs. Without EVIDENCE_SIGNING_KEY the page says so instead of
 * offering a button that can only fail.
 */
function EvidenceForm({ signingKey, ctx }: { signingKey: boolean; ctx: PageContext }) {
  return (
    <Section title="Evidence pack" id="evidence">
      {signingKey ? (
        <form method="post" action={`${ctx.basePath}/access/evidence`} class="filters">
          <CsrfField token={ctx.csrf} />
          <label>
            <span>From (UTC day)</span>
            <input type="date" name="from" required />
          </label>
          <label>
            <span>To (UTC day, included)</span>
            <input type="date" name="to" required />
          </label>
          <button type="submit" class="button">
            Download the evidence pack
          </button>
        </form>
      ) : (
        <p class="hint">
          Evidence packs are signed: set EVIDENCE_SIGNING_KEY (an Ed25519 private key, PEM or a file path) in the
          service's environment to download them here or with <code>scim-connector evidence</code>.
        </p>
      )}
      <p class="hint">
        One signed archive for the window: the access report at its start and end, every change in words, the
        revocations and how long each took to reach the platform, the mapping in force. Check it with{" "}
        <code>scim-connector evidence verify FILE --public-key KEY.pem</code> (the public half of the signing key).
      </p>
    </Section>
  );
}

/**
 * The evidence pack over a hash chain that does not verify: the same download, asked for again with
 * acceptUnverifiedChain=true (the page above it says why the pack cannot vouch for the log).
 */
export function EvidenceAnywayForm({ from, to, ctx }: { from: string; to: string; ctx: PageContext }) {
  return (
    <form method="post" action={`${ctx.basePath}/access/evidence`}>
      <CsrfField token={ctx.csrf} />
      <input type="hidden" name="from" value={from} />
      <input type="hidden" name="to" value={to} />
      <input type="hidden" name="acceptUnverifiedChain" value="true" />
      <button type="submit" class="button">
        Download the pack anyway
      </button>
    </form>
  );
}

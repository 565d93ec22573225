import { ActionButton, Badge, Facts, formatTime, Section } from "../components/basics.js";
import { DiffView } from "../components/diff.js";
import { RuleGrants } from "../components/bundles.js";
import { FilterForm } from "../components/filterForm.js";
import { Pager } from "../components/pager.js";
import { DataTable } from "../components/table.js";
import { can } from "../../../../policy.js";
import type { PageContext } from "../layout.js";
import { outcomeTone } from "./log.js";
import type { UserDetail, UsersPageData, UsersQuery } from "../../../../admin/users/users.js";

export function UsersPage({ data, query, ctx }: { data: UsersPageData; query: UsersQuery; ctx: PageContext }) {
  const base = `${ctx.basePath}/users`;
  return (
    <div>
      <FilterForm
        action={base}
        submitLabel="Search"
        fields={[
          { kind: "text", name: "q", label: "userName starts with", value: query.q, placeholder: "name@example.com" },
        ]}
      />
      <DataTable
        rows={data.rows}
        empty={query.q ? "No user matches that search." : "No users have been provisioned yet."}
        columns={[
          { label: "userName", cell: (u) => <a href={`${base}/${encodeURIComponent(u.id)}`}>{u.userName}</a> },
          {
            label: "Active",
            cell: (u) => <Badge tone={u.active ? "good" : "neutral"}>{u.active ? "active" : "inactive"}</Badge>,
          },
          { label: "Groups", cell: (u) => u.groups, numeric: true },
          { label: "State", cell: (u) => u.state },
          { label: "Last reconciled", cell: (u) => formatTime(u.lastReconciledAt) },
        ]}
      />
      <Pager path={base} query={{ q: query.q }} page={query.page} hasNext={data.hasNext} />
    </div>
  );
}

export function UserDetailPage({ user, ctx }: { user: UserDetail; ctx: PageContext }) {
  const base = ctx.basePath;
  return (
    <div>
      <p>
        <a href={`${base}/users`}>← Users</a>
      </p>
      {user.mappingNotice ? (
        <p class="flash" role="status">
          {user.mappingNotice}
        </p>
      ) : null}
      <Section title="Reconcile">
        <p>
          {user.queued ? <Badge tone="info">queued</Badge> : <Badge tone="neutral">not queued</Badge>} Reconcile now
          jumps the queue and spends budget.
        </p>
        {user.queue ? <p class="hint">Queue: {user.queue}.</p> : null}
        {can(ctx.actor.role, "reconcile") ? (
          <ActionButton
            action={`${base}/users/${encodeURIComponent(user.id)}/reconcile`}
            csrf={ctx.csrf}
            label="Reconcile now"
          />
        ) : (
          <p class="hint">Only admins can reconcile on demand.</p>
        )}
      </Section>
      <div class="grid">
        <Section title="IdP data">
          <Facts
            items={[
              ["userName", user.userName],
              ["Active", user.active ? "yes" : "no"],
              ["Groups", user.groups.length ? user.groups.join(", ") : "none"],
            ]}
          />
          <pre class="mono">{JSON.stringify(user.idp, null, 2)}</pre>
        </Section>
        <Section title="Rules that matched">
          <DataTable
            rows={user.matchedRules}
            empty="No mapping rule matches this user's groups."
            columns={[
              { label: "Rule", cell: (r) => r.rule },
              { label: "Grants", cell: (r) => <RuleGrants grants={r.grants} lists={r.lists} /> },
            ]}
          />
        </Section>
      </div>
      <Section title="Last applied → desired">
        {user.stripped ? (
          <p>
            <Badge tone="warn">stripped</Badge> Removed {formatTime(user.stripped.since)}: every permission (company,
            workspaces, teams). Stays: the account and its profile
            {user.stripped.deleteAfter
              ? `, until ${formatTime(user.stripped.deleteAfter)}, when it is deleted unless access is granted again.`
              : " (an adopted account: never deleted by the connector)."}
          </p>
        ) : null}
        {user.denies?.length ? (
          <ul>
            {user.denies.map((words) => (
              <li>
                <Badge tone="warn">revoked</Badge> {words}
              </li>
            ))}
          </ul>
        ) : null}
        {user.platform?.outside ? (
          <p>
            <Badge tone="warn">outside the connector</Badge> {user.platform.outside}
          </p>
        ) : null}
        {/* A stripped account is kept as it is until its DELETE: nothing of it (its name, its profile) is to be removed now. */}
        <DiffView
          before={user.lastApplied}
          after={user.stripped && !user.desired ? user.lastApplied : user.desired}
          showUnchanged
          bundles={user.bundles}
        />
      </Section>
      {user.platform ? (
        <Section title="The platform's record">
          <Facts
            items={[
              ["Last sign-in", user.platform.lastSignInAt ? formatTime(user.platform.lastSignInAt) : "none recorded"],
              [
                "Last failed login",
                user.platform.lastFailedLoginAt ? formatTime(user.platform.lastFailedLoginAt) : "none recorded",
              ],
              ["Suspended", user.platform.suspended ?? "no"],
            ]}
          />
        </Section>
      ) : null}
      <Section title="Log entries">
        <DataTable
          rows={user.log}
          empty="No log entries for this user."
          columns={[
            {
              label: "When",
              cell: (r) => <a href={`${base}/log/${encodeURIComponent(r.id)}`}>{formatTime(r.at)}</a>,
              nowrap: true,
            },
            { label: "Action", cell: (r) => r.action, nowrap: true },
            { label: "Outcome", cell: (r) => <Badge tone={outcomeTone(r.outcome)}>{r.outcome}</Badge> },
            { label: "Trigger", cell: (r) => r.trigger },
          ]}
        />
      </Section>
    </div>
  );
}

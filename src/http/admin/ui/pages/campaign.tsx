import type { CampaignItemsPage, CampaignSummaryView, DenyView } from "../../../../review/campaigns/index.js";
import { ActionButton, Badge, CsrfField, Facts, formatTime, Section } from "../components/basics.js";
import { FilterForm } from "../components/filterForm.js";
import { DataTable } from "../components/table.js";
import { can } from "../../../../policy.js";
import type { PageContext } from "../layout.js";
import { CloseCampaignButton, reviewerWords, scopeWords } from "./campaigns.js";

/**
 * One campaign for its reviewer: their items (admins: every reviewer's, or one's), filtered and
 * paged by cursor; a checkbox per open item for the bulk "Keep selected", and per item a "Revoke"
 * form whose comment is required (the use case refuses a revoke without one too).
 */

export type CampaignForm = Partial<
  Record<"reviewer" | "decision" | "workspace" | "permission" | "user" | "cursor", string>
>;

export const CAMPAIGN_FORM_FIELDS = ["reviewer", "decision", "workspace", "permission", "user"] as const;

type Item = CampaignItemsPage["items"][number];

export function CampaignPage(props: {
  campaign: CampaignSummaryView;
  items: CampaignItemsPage;
  denies: DenyView[] | null;
  form: CampaignForm;
  undecidedAtClose: "keep" | "revoke";
  ctx: PageContext;
}) {
  const { campaign, items, form, ctx } = props;
  const counts = items.counts;
  const base = `${ctx.basePath}/campaigns/${campaign.id}`;
  const admin = can(ctx.actor.role, "campaign");
  const open = campaign.status === "open";
  const kept = new URLSearchParams(CAMPAIGN_FORM_FIELDS.flatMap((k) => (form[k] ? [[k, form[k]!]] : [])));
  const here = `${base}${kept.size ? `?${kept.toString()}` : ""}`;
  const reviewers = [...new Set([...campaign.reviewers.map((r) => r.reviewer), campaign.fallbackReviewer])];
  return (
    <div>
      <Facts
        items={[
          ["Scope", scopeWords(campaign.scope)],
          ["Due", formatTime(campaign.dueAt)],
          ["Started", `${formatTime(campaign.startedAt)} by ${campaign.startedBy}`],
          [
            form.reviewer === "all" || (admin && !form.reviewer) ? "Items" : "Items to review",
            counts ? `${counts.items}: ${counts.open} open, ${counts.kept} kept, ${counts.revoked} revoked` : "—",
          ],
          [
            "Status",
            campaign.closedAt ? (
              <span>
                <Badge>closed</Badge> {formatTime(campaign.closedAt)} by {campaign.closedBy}
                {campaign.closeSummary
                  ? ` · ${campaign.closeSummary.undecided} undecided (${campaign.closeSummary.undecidedAction === "keep" ? "kept, reported" : "revoked at close"})`
                  : ""}
              </span>
            ) : (
              <Badge tone="info">open</Badge>
            ),
          ],
        ]}
      />
      {admin && open ? (
        <p>
          <CloseCampaignButton
            id={campaign.id}
            ctx={ctx}
            undecided={props.undecidedAtClose === "keep" ? "kept" : "revoked"}
          />
        </p>
      ) : null}
      <FilterForm
        action={base}
        fields={[
          ...(admin
            ? [
                {
                  kind: "select" as const,
                  name: "reviewer",
                  label: "Reviewer",
                  value: form.reviewer,
                  options: [
                    { value: "mine", label: "Mine" },
                    ...reviewers.map((r) => ({ value: r, label: reviewerWords(r) })),
                  ],
                },
              ]
            : []),
          {
            kind: "select",
            name: "decision",
            label: "Decision",
            value: form.decision,
            options: [
              { value: "open", label: "Open" },
              { value: "keep", label: "Kept" },
              { value: "revoke", label: "Revoked" },
            ],
          },
          { kind: "text", name: "workspace", label: "Workspace", value: form.workspace },
          { kind: "text", name: "permission", label: "Permission", value: form.permission },
          { kind: "text", name: "user", label: "User", value: form.user, placeholder: "userName starts with" },
        ]}
      />
      {open ? (
        <form method="post" action={`${base}/keep`} id="bulk" class="inline-form">
          <CsrfField token={ctx.csrf} />
          <input type="hidden" name="filters" value={kept.toString()} />
        </form>
      ) : null}
      <ItemsTable items={items.items} open={open} base={base} filters={kept.toString()} ctx={ctx} />
      {open && items.items.some((i) => i.decision === null) ? (
        <p>
          <button type="submit" form="bulk" class="button">
            Keep selected
          </button>
        </p>
      ) : null}
      <nav class="pager" aria-label="Pages">
        {form.cursor ? <a href={here}>← First page</a> : <span />}
        {items.nextCursor ? (
          <a href={`${base}?${new URLSearchParams([...kept, ["cursor", items.nextCursor]]).toString()}`}>Next →</a>
        ) : (
          <span />
        )}
      </nav>
      {props.denies ? <DeniesSection denies={props.denies} ctx={ctx} filters={kept.toString()} /> : null}
    </div>
  );
}

function ItemsTable(props: { items: Item[]; open: boolean; base: string; filters: string; ctx: PageContext }) {
  const { open, base, filters, ctx } = props;
  return (
    <DataTable
      rows={props.items}
      empty="No item matches these filters."
      columns={[
        {
          label: "Select",
          cell: (i) =>
            open && i.decision === null ? (
              <input
                type="checkbox"
                name="item"
                value={i.id}
                form="bulk"
                aria-label={`Select ${i.userName} ${i.grant}`}
              />
            ) : null,
        },
        { label: "User", cell: (i) => i.userName },
        {
          label: "Grant",
          cell: (i) =>
            i.bundle ? (
              <span>
                {i.grant}
                <AllStrings permissions={i.bundle} />
              </span>
            ) : i.unmanaged ? (
              <span>
                {i.grant}
                <span class="hint"> · holds {i.unmanaged.holds.join("; ") || "nothing"}</span>
              </span>
            ) : (
              i.grant
            ),
        },
        {
          label: "Why",
          cell: (i) =>
            i.origin ? (
              <span>{i.origin}</span>
            ) : i.rules.length ? (
              <ul class="plain-list">
                {i.rules.map((r) =>
                  r.assigned ? (
                    <li>{r.assigned}</li>
                  ) : (
                    <li>
                      rule at line {r.line}
                      {r.description ? ` '${r.description}'` : ""} via {r.groups.join(", ")}
                    </li>
                  ),
                )}
                {i.idpAssigns ? (
                  <li>
                    <span class="hint">{i.idpAssigns}</span>
                  </li>
                ) : null}
              </ul>
            ) : (
              <span class="hint">no rule recorded</span>
            ),
        },
        {
          label: "Held since · verified",
          cell: (i) =>
            `${i.appliedAt ? formatTime(i.appliedAt) : "—"} · ${i.verifiedAt ? formatTime(i.verifiedAt) : "—"}`,
        },
        { label: "Reviewer", cell: (i) => reviewerWords(i.reviewer) },
        {
          label: "Decision",
          cell: (i) =>
            i.decision ? (
              <span>
                <Badge tone={i.decision === "keep" ? "good" : "bad"}>
                  {i.decision === "keep" ? "kept" : "revoked"}
                </Badge>{" "}
                by {i.decidedBy} {i.decidedAt ? formatTime(i.decidedAt) : ""}
                {i.comment ? <span class="hint"> · {i.comment}</span> : null}
              </span>
            ) : open ? (
              <form method="post" action={`${base}/revoke`} class="inline-form">
                <CsrfField token={ctx.csrf} />
                <input type="hidden" name="item" value={i.id} />
                <input type="hidden" name="filters" value={filters} />
                <input
                  type="text"
                  name="comment"
                  required
                  maxLength={2000}
                  placeholder="why (required)"
                  aria-label={`Why revoke ${i.userName} ${i.grant}`}
                />{" "}
                {i.unmanaged ? (
                  <select name="removal" aria-label={`How to revoke ${i.userName}`}>
                    <option value="strip">strip (one PUT taking its permissions away)</option>
                    <option value="delete">delete (once an admin approves)</option>
                  </select>
                ) : null}{" "}
                <button type="submit" class="button danger">
                  Revoke
                </button>
              </form>
            ) : (
              <Badge tone="warn">undecided</Badge>
            ),
        },
      ]}
    />
  );
}

/** A bundle's strings, folded: one item stands for them all, and a reviewer can still read each. */
function AllStrings({ permissions }: { permissions: readonly string[] }) {
  return (
    <details class="bundle">
      <summary>all {permissions.length}</summary>
      <code>{permissions.join(" ")}</code>
    </details>
  );
}

function DeniesSection({ denies, ctx, filters }: { denies: DenyView[]; ctx: PageContext; filters: string }) {
  return (
    <Section title="Denies from this campaign" id="denies">
      <DataTable
        rows={denies}
        empty="No grant was revoked in this campaign."
        columns={[
          { label: "User", cell: (d) => d.userName },
          {
            label: "Grant",
            cell: (d) =>
              d.count > 1 ? (
                <span>
                  {d.grant}
                  <AllStrings permissions={d.permissions} />
                </span>
              ) : (
                d.grant
              ),
          },
          { label: "Revoked", cell: (d) => `by ${d.decidedBy} on ${formatTime(d.decidedAt)}: ${d.comment}` },
          {
            label: "State",
            cell: (d) =>
              d.endedAt ? (
                <span>
                  ended {formatTime(d.endedAt)} (
                  {d.endReason === "lifted" ? `lifted by ${d.endedBy}` : "the IdP no longer grants it"})
                </span>
              ) : (
                <ActionButton
                  action={`${ctx.basePath}/denies/${d.id}/lift`}
                  csrf={ctx.csrf}
                  label="Lift the deny"
                  hidden={{ filters }}
                />
              ),
          },
        ]}
      />
    </Section>
  );
}

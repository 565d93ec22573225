import { ActionButton, Badge, CsrfField, formatTime } from "../components/basics.js";
import { DataTable } from "../components/table.js";
import { can } from "../../../../policy.js";
import type { PageContext } from "../layout.js";
import type { ApprovalsData, HeldItem } from "../../../../admin/approvals.js";

const KIND_LABEL = { deprovision: "deprovision", email_change: "email change" } as const;

export function ApprovalsPage({ data, ctx }: { data: ApprovalsData; ctx: PageContext }) {
  const base = `${ctx.basePath}/approvals`;
  const admin = can(ctx.actor.role, "approve");
  if (!admin) {
    return (
      <div>
        <p class="hint">Only admins can approve or reject. You can see what is waiting.</p>
        <HeldTable data={data} />
      </div>
    );
  }
  return (
    <div>
      {data.held.length ? (
        <p>
          <ActionButton
            action={`${base}/approve`}
            csrf={ctx.csrf}
            label={`Approve all (${data.held.length})`}
            hidden={{ all: "1" }}
          />{" "}
          <ActionButton action={`${base}/reject`} csrf={ctx.csrf} label="Reject all" hidden={{ all: "1" }} danger />
        </p>
      ) : null}
      {/* One form, two submit buttons: the checked rows go to approve or reject. */}
      <form method="post" action={`${base}/approve`}>
        <CsrfField token={ctx.csrf} />
        <HeldTable data={data} selectable />
        {data.held.length ? (
          <p>
            <button type="submit" class="button">
              Approve selected
            </button>{" "}
            <button type="submit" class="button danger" formaction={`${base}/reject`}>
              Reject selected
            </button>
          </p>
        ) : null}
      </form>
    </div>
  );
}

function HeldTable({ data, selectable }: { data: ApprovalsData; selectable?: boolean }) {
  return (
    <DataTable
      rows={data.held}
      empty="Nothing is waiting for approval."
      columns={[
        ...(selectable
          ? [
              {
                label: "Select",
                cell: (h: HeldItem) => (
                  <input type="checkbox" name="id" value={h.id} aria-label={`Select ${h.userName}`} />
                ),
              },
            ]
          : []),
        { label: "User", cell: (h) => h.userName },
        {
          label: "Held action",
          cell: (h) => <Badge tone={h.kind === "deprovision" ? "bad" : "warn"}>{KIND_LABEL[h.kind]}</Badge>,
        },
        { label: "Why", cell: (h) => h.summary },
        { label: "Held since", cell: (h) => formatTime(h.heldAt) },
      ]}
    />
  );
}

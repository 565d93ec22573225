import { Badge, formatTime, Section, type Tone } from "../components/basics.js";
import { DataTable } from "../components/table.js";
import type { CredentialRow } from "../../../../admin/credentials.js";

/**
 * The Credentials page: every credential an IdP can present (bearer tokens, OAuth client secrets,
 * assertion clients, live access tokens) with its state, last use and expiry. Read-only: they are
 * made and revoked with `scim-connector token …` (docs/operations.md, "OAuth").
 */

const STATE_TONE: Record<CredentialRow["state"], Tone> = { active: "good", expired: "bad", revoked: "info" };

export function CredentialsPage({ rows }: { rows: CredentialRow[] }) {
  return (
    <Section title="IdP credentials">
      <DataTable
        rows={rows}
        empty="No credential yet: make one with `scim-connector token create` or `token client create`."
        caption="Made and revoked with scim-connector token …; secrets are never shown, only their first characters."
        columns={[
          { label: "Kind", cell: (c) => c.kind, nowrap: true },
          { label: "Name (client_id)", cell: (c) => <code>{c.name}</code> },
          { label: "Prefix", cell: (c) => (c.prefix ? <code>{`${c.prefix}…`}</code> : "") },
          { label: "State", cell: (c) => <Badge tone={STATE_TONE[c.state]}>{c.state}</Badge> },
          { label: "Last used", cell: (c) => (c.lastUsedAt ? formatTime(c.lastUsedAt) : "never"), nowrap: true },
          { label: "Expires", cell: (c) => (c.expiresAt ? formatTime(c.expiresAt) : "never"), nowrap: true },
          { label: "Id", cell: (c) => <code>{c.id}</code> },
        ]}
      />
    </Section>
  );
}

import { Badge, CsrfField, Section } from "../components/basics.js";
import { DataTable } from "../components/table.js";
import { ChangeList, RuleGrants } from "../components/bundles.js";
import type { PageContext } from "../layout.js";
import type { MappingData, MappingPreview } from "../../../../admin/mapping/mapping.js";
import { can } from "../../../../policy.js";

export function MappingPage(props: { data: MappingData; draft?: string; preview?: MappingPreview; ctx: PageContext }) {
  const { ctx, data, preview } = props;
  const base = `${ctx.basePath}/mapping`;
  const draft = props.draft ?? data.source;
  return (
    <div>
      <Section title="Rules in force">
        <p class="hint">
          From <code>{data.file}</code> · reloaded automatically when the file changes
        </p>
        {data.notice ? (
          <p class="flash" role="status">
            {data.notice}
          </p>
        ) : null}
        <DataTable
          rows={data.rules}
          empty="The mapping has no rules."
          columns={[
            { label: "Rule", cell: (r) => r.name },
            { label: "IdP groups", cell: (r) => r.groups },
            { label: "Grants", cell: (r) => <RuleGrants grants={r.grants} lists={r.lists} /> },
          ]}
        />
      </Section>
      <Section title="Permission model">
        <p>
          The rules speak{" "}
          <Badge tone={data.permissionModel === "granular" ? "good" : "warn"}>{data.permissionModel}</Badge>{" "}
          permissions.
          {data.permissionModel === "legacy" ? (
            <>
              {" "}
              The platform refuses legacy strings from December 2026: <code>scim-connector mapping migrate</code>{" "}
              translates the file (docs/granular-permissions.md).
            </>
          ) : null}
        </p>
        {data.renamed.length ? (
          <ul class="flash flash-error" role="alert">
            {data.renamed.map((r) => (
              <li>{r}</li>
            ))}
          </ul>
        ) : null}
        {data.editedInDashboard.length ? (
          <div class="flash">
            <p>
              Edited in the platform's dashboard since (its Security Event record): the connector cannot read what they
              grant now, only that they changed. Check that the mapping still means what it meant.
            </p>
            <ul>
              {data.editedInDashboard.map((e) => (
                <li>{e.words}</li>
              ))}
            </ul>
          </div>
        ) : null}
        {data.warnings.length ? (
          <details>
            <summary>{data.warnings.length} warnings</summary>
            <ul>
              {data.warnings.map((w) => (
                <li>{w}</li>
              ))}
            </ul>
          </details>
        ) : null}
      </Section>
      <Section title="Identifiers learned from the platform">
        <p class="hint">
          API identifiers of workspaces, teams, roles and permission sets, read from the platform&apos;s answers at no
          cost (the platform publishes no list of them). Pin one in the mapping with <code>id:</code> so that a rename
          on the platform changes nothing.
        </p>
        <DataTable
          rows={data.identifiers}
          empty="None learned yet: they come with the platform's answers in the granular model."
          columns={[
            { label: "Kind", cell: (i) => i.kind },
            { label: "Name", cell: (i) => (i.previousName ? `${i.name} (was ${i.previousName})` : i.name) },
            { label: "Identifier", cell: (i) => <code>{i.id}</code> },
            { label: "First seen", cell: (i) => i.firstSeen.toISOString() },
            { label: "Last seen", cell: (i) => i.lastSeen.toISOString() },
          ]}
        />
      </Section>
      <Section title="Preview a draft">
        {can(ctx.actor.role, "mapping") ? (
          <PreviewForm base={base} draft={draft} csrf={ctx.csrf} />
        ) : (
          <p class="hint">Previewing a draft runs it over every user: an administrator can do it.</p>
        )}
      </Section>
      {preview ? <PreviewResult preview={preview} applyInstructions={data.applyInstructions} /> : null}
    </div>
  );
}

function PreviewForm(props: { base: string; draft: string; csrf: string }) {
  const { base, draft } = props;
  return (
    <form method="post" action={`${base}/preview`} class="stack" enctype="multipart/form-data">
      <CsrfField token={props.csrf} />
      <label for="draft">
        Paste a draft mapping (YAML), or upload the file, to see whom it would change and what it would cost. A preview
        changes nothing.
      </label>
      <textarea id="draft" name="draft" spellcheck={false}>
        {draft}
      </textarea>
      <label for="draftFile">Or upload a mapping file (used instead of the text above when given)</label>
      <input type="file" id="draftFile" name="draftFile" accept=".yaml,.yml,text/yaml,text/plain" />
      <button type="submit" class="button">
        Preview changes
      </button>
    </form>
  );
}

function PreviewResult(props: { preview: MappingPreview; applyInstructions: string }) {
  const { preview } = props;
  if (preview.errors.length) {
    return (
      <Section title="The draft has problems">
        <ul>
          {preview.errors.map((e) => (
            <li>{e}</li>
          ))}
        </ul>
      </Section>
    );
  }
  return (
    <Section title="What the draft would change" id="preview">
      <p>
        <span class="stat">{preview.usersAffected}</span> users affected · about{" "}
        <strong>{preview.estimatedCalls}</strong> platform calls · {preview.durationLabel}
      </p>
      {preview.changes.length < preview.usersAffected ? (
        <p class="hint">{`Showing the first ${preview.changes.length} of ${preview.usersAffected} users.`}</p>
      ) : null}
      <DataTable
        rows={preview.changes}
        empty="No user's permissions would change."
        columns={[
          { label: "User", cell: (c) => c.userName },
          { label: "Gains", cell: (c) => <ChangeList items={c.gains} sign="+" tone="good" /> },
          { label: "Loses", cell: (c) => <ChangeList items={c.losses} sign="−" tone="bad" /> },
        ]}
      />
      <p class="hint">{props.applyInstructions}</p>
    </Section>
  );
}

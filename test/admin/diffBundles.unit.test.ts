import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { describe, expect, it } from "vitest";
import { DiffView } from "../../src/http/admin/ui/components/diff.js";

/**
 * The diff draws a list's strings as the reviews group them (issue 47, item 8): a bundle as one row
 * named by its origin, many strings changed the same way as one row, the strings in a <details>;
 * a legacy state's few strings keep a row each.
 */
const rowsOf = (html: string) => [...html.matchAll(/<tr class="([^"]+)">/g)].map((m) => m[1]);
const summaries = (html: string) =>
  [...html.matchAll(/<summary>([\s\S]*?)<\/summary>/g)].map((m) => m[1]!.replace(/&#x27;|&#39;/g, "'"));

describe("the diff's bundles", () => {
  const many = ["a1", "a2", "a3", "a4", "a5", "a6"];

  it("keeps a row per string for a few strings, as a legacy state has", () => {
    const html = renderToString(
      h(DiffView, { before: { ws: { X: ["basic_access"] } }, after: { ws: { X: ["basic_access", "send"] } } }),
    );
    expect(html).toContain("ws.X[send]");
    expect(html).not.toContain("<details");
  });

  it("folds a bundle into one row named by its rule, and other strings changed alike into one row each", () => {
    const html = renderToString(
      h(DiffView, {
        before: { ws: { X: ["old1", "old2", "old3", "old4", "old5"] } },
        after: { ws: { X: [...many, "b1"] } },
        bundles: [{ list: "ws.X", label: "from rule 'EU marketers'", strings: many }],
      }),
    );
    expect(rowsOf(html)).toEqual(["diff-added diff-bundle", "diff-added", "diff-removed diff-bundle"]);
    expect(summaries(html)).toEqual(["6 permissions from rule 'EU marketers'", "5 permissions"]);
    expect(html).toContain("ws.X[b1]");
    expect(html).toContain("<code>old1 old2 old3 old4 old5</code>");
  });
});

import type { GrantList } from "../../../../admin/mapping/rules.js";
import { Badge } from "./basics.js";

/**
 * Granular strings folded (issue 47, item 8): one of the platform's bundles is dozens of strings,
 * which the reviews show as one grant. The admin pages show one line per bundle or list, its
 * strings one click away in a <details> (no JavaScript).
 */

/** More strings than this, of one list and changed alike, are folded into one line. */
export const FOLD_OVER = 4;

/** A list's strings folded: their number and origin ("from rule 'EU marketers'", "in EU Production"). */
export function FoldedStrings(props: { strings: readonly string[]; label?: string | undefined; sign?: string }) {
  const n = props.strings.length;
  return (
    <details class="bundle">
      <summary>
        {props.sign ? `${props.sign} ` : ""}
        {n} permission{n === 1 ? "" : "s"}
        {props.label ? ` ${props.label}` : ""}
      </summary>
      <code>{props.strings.join(" ")}</code>
    </details>
  );
}

/** What a rule grants in words, then each list the words abbreviate, in full. */
export function RuleGrants(props: { grants: string; lists?: readonly GrantList[] | undefined }) {
  return (
    <>
      {props.grants}
      {(props.lists ?? []).map((l) => (
        <FoldedStrings strings={l.strings} label={`in ${l.label}`} />
      ))}
    </>
  );
}

/**
 * A preview's gains or losses ("workspace EU Production: view_campaigns", one per string): the
 * strings of one place folded into one line when there are more than FOLD_OVER, a badge each otherwise.
 */
export function ChangeList(props: { items: readonly string[]; sign: "+" | "−"; tone: "good" | "bad" }) {
  const places = new Map<string, string[]>();
  for (const item of props.items) {
    const cut = item.lastIndexOf(": ");
    const place = cut < 0 ? "" : item.slice(0, cut);
    places.set(place, [...(places.get(place) ?? []), cut < 0 ? item : item.slice(cut + 2)]);
  }
  return (
    <>
      {[...places].map(([place, strings]) =>
        place && strings.length > FOLD_OVER ? (
          <FoldedStrings strings={strings} label={`in ${place}`} sign={props.sign} />
        ) : (
          strings.map((s) => <Badge tone={props.tone}>{`${props.sign} ${place ? `${place}: ` : ""}${s}`}</Badge>)
        ),
      )}
    </>
  );
}

/**
 * Pure cursor pagination of the `/cdi` endpoints: 10 items a page, opaque cursors bound to the
 * list they came from, and the `Link` header exactly as the document writes it
 * (`<path?cursor=...>; rel=prev`, `<path?cursor=...>; rel=next`; absent for 10 or fewer items).
 */

const CDI_PAGE_SIZE = 10;

export function encodeCursor(scope: string, offset: number): string {
  return Buffer.from(`${scope}|${offset}`).toString("base64url");
}

/** The offset a cursor points at, or undefined when it is not one this list issued. */
export function decodeCursor(cursor: string, scope: string, total: number): number | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const text = Buffer.from(cursor, "base64url").toString();
  const separator = text.lastIndexOf("|");
  if (separator < 0 || text.slice(0, separator) !== scope) return undefined;
  const digits = text.slice(separator + 1);
  if (!/^\d+$/.test(digits)) return undefined;
  const offset = Number(digits);
  if (offset % CDI_PAGE_SIZE !== 0 || (offset >= total && offset !== 0)) return undefined;
  return offset;
}

export type Page<T> = { items: T[]; link?: string };

export function paginate<T>(all: readonly T[], offset: number, path: string, scope: string): Page<T> {
  const items = all.slice(offset, offset + CDI_PAGE_SIZE);
  if (all.length <= CDI_PAGE_SIZE) return { items };
  const links: string[] = [];
  if (offset > 0) links.push(`<${path}?cursor=${encodeCursor(scope, Math.max(0, offset - CDI_PAGE_SIZE))}>; rel=prev`);
  if (offset + CDI_PAGE_SIZE < all.length)
    links.push(`<${path}?cursor=${encodeCursor(scope, offset + CDI_PAGE_SIZE)}>; rel=next`);
  return { items, link: links.length ? links.join(", ") : undefined };
}

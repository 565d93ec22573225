/**
 * The route template of an IdP-facing SCIM request, for metric labels: ids collapse to `:id` so
 * the label set stays small whatever the IdP sends (a raw path would hold ids, and filters hold
 * emails). Pure, with a table test.
 */
const TEMPLATES: [RegExp, string][] = [
  [/^\/Users\/?$/i, "/Users"],
  [/^\/Users\/\.search\/?$/i, "/Users/.search"],
  [/^\/Users\/[^/]+\/?$/i, "/Users/:id"],
  [/^\/Groups\/?$/i, "/Groups"],
  [/^\/Groups\/\.search\/?$/i, "/Groups/.search"],
  [/^\/Groups\/[^/]+\/?$/i, "/Groups/:id"],
  [/^\/ServiceProviderConfigs?\/?$/i, "/ServiceProviderConfig"],
  [/^\/ResourceTypes\/?$/i, "/ResourceTypes"],
  [/^\/ResourceTypes\/[^/]+\/?$/i, "/ResourceTypes/:id"],
  [/^\/Schemas\/?$/i, "/Schemas"],
  [/^\/Schemas\/[^/]+\/?$/i, "/Schemas/:id"],
  [/^\/Bulk\/?$/i, "/Bulk"],
  [/^\/\.search\/?$/i, "/.search"],
];

/** `path` is relative to /scim/v2 (Express's `req.path` under the mount), without the query. */
export function scimRouteTemplate(path: string): string {
  for (const [pattern, template] of TEMPLATES) if (pattern.test(path)) return `/scim/v2${template}`;
  return "/scim/v2/other";
}

/** "2xx", "4xx", ... */
export function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : "other";
}

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);
export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : "other";
}

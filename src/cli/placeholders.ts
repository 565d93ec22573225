/**
 * Values a person must choose, which templates ship as placeholders (deploy/kubernetes's ConfigMap,
 * docs' examples): refused when NODE_ENV=production, each named with the fix. A base applied with
 * only its Secret filled booted against `https://rest.example.com` with a mapping that made "Platform
 * Admins" company admins. Hosts under example.com, example.net and example.org are reserved for
 * documentation (RFC 2606), so no real deployment uses one; `CHANGE-ME` is the templates' word.
 */
const CHOSEN_SETTINGS: Record<string, string> = {
  PUBLIC_URL: "the HTTPS URL your IdP reaches the connector at",
  PLATFORM_URL: "your platform instance's REST endpoint",
  PLATFORM_REQUEST_ORIGIN: "the request origin your platform account expects (docs/go-live.md)",
  TRUST_PROXY: "your TLS-terminating proxy's address or subnet (an ingress controller's pods), or its hop count",
  SAML_ENTRY_POINT: "your IdP's SAML sign-in URL",
  SAML_ISSUER: "this connector's SAML entity id",
  SAML_CALLBACK_URL: "this connector's SAML assertion consumer URL",
  OAUTH_JWT_ISSUER: "your IdP's token issuer",
  OAUTH_JWT_JWKS_URL: "your IdP's JWKS URL",
};

const PLACEHOLDER_WORD = /change[-_ ]?me/i;
const DOCUMENTATION_HOST = /(^|\.)example\.(com|net|org)$/i;

/** One problem per setting that still holds a placeholder, in the boot's `NAME: what, fix` form. */
export function placeholderSettings(raw: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  for (const [name, what] of Object.entries(CHOSEN_SETTINGS)) {
    const value = raw[name]?.trim();
    if (!value) continue;
    const why = PLACEHOLDER_WORD.test(value)
      ? "is the template's placeholder (CHANGE-ME)"
      : DOCUMENTATION_HOST.test(hostOf(value) ?? "")
        ? `names ${hostOf(value)!}, a host reserved for documentation (RFC 2606)`
        : undefined;
    if (why) problems.push(`${name}: ${why}, not a value chosen for this deployment: set it to ${what}.`);
  }
  return problems;
}

function hostOf(value: string): string | undefined {
  try {
    return new URL(value).hostname;
  } catch {
    return /^[a-z0-9.-]+$/i.test(value) ? value : undefined;
  }
}

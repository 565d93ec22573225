import type { Profile } from "@node-saml/passport-saml";

/**
 * Checks node-saml does not make: the Response's Destination and every SubjectConfirmationData
 * Recipient must be our ACS URL, so a response the IdP addressed to another service provider
 * cannot be used here. They run on what node-saml verified: the signed assertion it parsed, and
 * the root element of the response, which (wantAuthnResponseSigned) is the element the response
 * signature covers. Anything unexpected fails closed.
 */

export class SamlAddressingError extends Error {}

export function checkResponseAddressing(profile: Profile, acsUrl: string): void {
  const destination = rootAttribute(profile.getSamlResponseXml?.() ?? "", "Destination");
  if (destination !== acsUrl) {
    throw new SamlAddressingError("the response is addressed to another service (Destination is not this ACS URL)");
  }
  const assertion = (profile.getAssertion?.() as { Assertion?: XmlNode } | undefined)?.Assertion;
  const confirmations = (assertion?.Subject?.[0]?.SubjectConfirmation ?? []).flatMap(
    (c) => c.SubjectConfirmationData ?? [],
  );
  if (!confirmations.length) throw new SamlAddressingError("the assertion has no SubjectConfirmationData");
  if (confirmations.some((data) => data.$?.Recipient !== acsUrl)) {
    throw new SamlAddressingError("the assertion is meant for another recipient (Recipient is not this ACS URL)");
  }
}

type XmlNode = { $?: Record<string, string>; [child: string]: XmlNode[] | Record<string, string> | undefined } & {
  Subject?: XmlNode[];
  SubjectConfirmation?: XmlNode[];
  SubjectConfirmationData?: XmlNode[];
};

/** An attribute of the document's root element (after an optional XML declaration); undefined if absent. */
function rootAttribute(xml: string, name: string): string | undefined {
  const root = /^\s*(?:<\?xml[^>]*\?>\s*)?<(?:[A-Za-z_][\w.-]*:)?Response\b([^>]*)>/.exec(xml);
  if (!root) return undefined;
  const attr = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(root[1]!);
  const raw = attr?.[1] ?? attr?.[2];
  return raw === undefined ? undefined : decodeEntities(raw);
}

function decodeEntities(value: string): string {
  return value.replace(
    /&(amp|lt|gt|quot|apos);/g,
    (_m, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" })[e]!,
  );
}

/**
 * SAML_IDP_ISSUER, when set: the signed assertion's Issuer, and the response's own Issuer when it
 * has one (it is optional in SAML), must name the IdP. node-saml's idpIssuer covers logout only.
 */
export function checkIssuer(profile: Profile, expected: string): void {
  if (profile.issuer !== expected)
    throw new SamlAddressingError(
      "the assertion was issued by another identity provider (Issuer is not SAML_IDP_ISSUER)",
    );
  const responseIssuer = rootIssuer(profile.getSamlResponseXml?.() ?? "");
  if (responseIssuer !== undefined && responseIssuer !== expected) {
    throw new SamlAddressingError(
      "the response was issued by another identity provider (Issuer is not SAML_IDP_ISSUER)",
    );
  }
}

/** The text of the Issuer element right under the Response root; undefined if it has none. */
function rootIssuer(xml: string): string | undefined {
  const match =
    /^\s*(?:<\?xml[^>]*\?>\s*)?<(?:[A-Za-z_][\w.-]*:)?Response\b[^>]*>\s*<(?:[A-Za-z_][\w.-]*:)?Issuer\b[^>]*>([^<]*)<\//.exec(
      xml,
    );
  return match ? decodeEntities(match[1]!.trim()) : undefined;
}

/**
 * A comment inside the NameID is tampering: canonicalisation drops comments, so both signatures
 * still verify, while a reader that stops at the comment sees another user (the 2018 SAML
 * comment-truncation flaws). No IdP sends one, so the response is refused rather than read.
 */
export function checkNameIdUncommented(profile: Profile): void {
  // The response as posted: node-saml's assertion XML is the canonical form, comments already gone.
  const response = profile.getSamlResponseXml?.() ?? "";
  const nameIds = [...response.matchAll(/<(?:[\w-]+:)?NameID\b[^>]*>([\s\S]*?)<\/(?:[\w-]+:)?NameID>/g)].map(
    (m) => m[1]!,
  );
  if (nameIds.length === 0 || nameIds.some((text) => text.includes("<!--")))
    throw new SamlAddressingError("the assertion's NameID is missing or holds a comment");
}

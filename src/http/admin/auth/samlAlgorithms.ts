/**
 * SHA-256 or better only. node-saml (through xml-crypto) verifies whatever algorithm a signature
 * names, RSA-SHA1 and SHA-1 digests included, and offers no setting to refuse them, so the raw
 * response is checked here before it is verified. Every SignatureMethod and DigestMethod element
 * anywhere in the document must name an allowed algorithm; one we cannot read counts as refused.
 */

const ALLOWED_SIGNATURES = new Set([
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
]);
const ALLOWED_DIGESTS = new Set(["http://www.w3.org/2001/04/xmlenc#sha256", "http://www.w3.org/2001/04/xmlenc#sha512"]);

const ELEMENT_START = /<(?:[A-Za-z_][\w.-]*:)?(SignatureMethod|DigestMethod)(?=[\s/>])/g;
/** The same element with well-formed attributes, so a quoted ">" cannot hide its Algorithm. */
const ELEMENT =
  /<(?:[A-Za-z_][\w.-]*:)?(SignatureMethod|DigestMethod)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*\/?>/g;
const ALGORITHM = /\sAlgorithm\s*=\s*(?:"([^"]*)"|'([^']*)')/;

class WeakAlgorithmError extends Error {}

/** Throws WeakAlgorithmError unless every signature in `xml` uses RSA-SHA256/512 with SHA-256/512 digests. */
export function requireStrongAlgorithms(xml: string): void {
  const starts = xml.match(ELEMENT_START)?.length ?? 0;
  let readable = 0;
  for (const [, kind, attributes] of xml.matchAll(ELEMENT)) {
    readable += 1;
    const algorithm = ALGORITHM.exec(attributes ?? "");
    const value = algorithm?.[1] ?? algorithm?.[2];
    const allowed = kind === "SignatureMethod" ? ALLOWED_SIGNATURES : ALLOWED_DIGESTS;
    if (value === undefined || !allowed.has(value)) {
      throw new WeakAlgorithmError(
        `the response is signed with ${value ?? "an unnamed algorithm"}; only RSA-SHA256 (or SHA-512) is accepted`,
      );
    }
  }
  if (readable !== starts) throw new WeakAlgorithmError("the response's signature algorithms could not be read");
}

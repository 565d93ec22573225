import { DOMParser, XMLSerializer } from "@xmldom/xmldom";
import { SignedXml } from "xml-crypto";
import { assertionXml, responseXml, signedResponse, type IdpKeys, type ResponseOptions } from "../support/saml.js";

/**
 * XML signature wrapping (XSW), the known shapes: each keeps a genuinely IdP-signed element and
 * moves it where a careless validator still finds its signature valid while reading the forged
 * assertion. `naiveValidate` is such a validator, written on purpose: a test shows it accepts each
 * shape, so the connector refusing the same bytes is its own defence, not a broken message.
 */

const SAML = "urn:oasis:names:tc:SAML:2.0:assertion";
const DSIG = "http://www.w3.org/2000/09/xmldsig#";

const parse = (xml: string) => new DOMParser().parseFromString(xml, "text/xml");
const serialize = (node: Node) => new XMLSerializer().serializeToString(node);
const childElements = (parent: Element, ns: string, localName: string): Element[] =>
  Array.from(parent.childNodes).filter(
    (n): n is Element =>
      n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === localName,
  );

/** What the naive validator believes, or undefined when it finds no valid signature. */
export type NaiveVerdict = { nameId: string | undefined; role: string | undefined } | undefined;

/**
 * Accepts when any signature in the document verifies on the element that carries it, then reads
 * the subject where a response keeps it: the root's first Assertion, its Subject's NameID (the
 * first text node only) and its first attribute value.
 */
export function naiveValidate(xml: string, cert: string): NaiveVerdict {
  const doc = parse(xml);
  const verified = Array.from(doc.getElementsByTagNameNS(DSIG, "Signature")).some((signature) => {
    const check = new SignedXml({ publicCert: cert });
    check.loadSignature(signature);
    try {
      return check.checkSignature(serialize(signature.parentNode!));
    } catch {
      return false;
    }
  });
  if (!verified) return undefined;
  const assertion = childElements(doc.documentElement, SAML, "Assertion")[0];
  const path = (from: Element | undefined, ...names: string[]) =>
    names.reduce((at, name) => at && childElements(at, SAML, name)[0], from);
  const firstText = (element: Element | undefined) => element?.firstChild?.nodeValue ?? undefined;
  return {
    nameId: firstText(path(assertion, "Subject", "NameID")),
    role: firstText(path(assertion, "AttributeStatement", "Attribute", "AttributeValue")),
  };
}

/** The assertion of a genuine, fully signed response, with its IdP signature. */
function signedAssertionOf(genuine: string): string {
  return /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(genuine)![0];
}
const assertionIdOf = (xml: string) => /<saml:Assertion [^>]*ID="([^"]+)"/.exec(xml)![1]!;

/** The signed assertion moved inside an unsigned, forged one (after its statements). */
export function signedAssertionUnderForged(genuine: string, forged: ResponseOptions): string {
  const inner = signedAssertionOf(genuine);
  return responseXml(forged, assertionXml(forged).replace("</saml:Assertion>", `${inner}</saml:Assertion>`));
}

/** A forged assertion with the signed assertion's ID, placed before it. */
export function duplicateAssertionId(genuine: string, forged: ResponseOptions): string {
  const inner = signedAssertionOf(genuine);
  return responseXml(forged, assertionXml({ ...forged, assertionId: assertionIdOf(inner) }) + inner);
}

/** The whole signed response tucked into the Extensions of a new response carrying a forged assertion. */
export function wrappedInExtensions(genuine: string, forged: ResponseOptions): string {
  return responseXml(forged, assertionXml(forged)).replace(
    "<samlp:Status>",
    `<samlp:Extensions>${genuine.replace(/^<\?xml[^>]*>/, "")}</samlp:Extensions><samlp:Status>`,
  );
}

/** The signed assertion's Signature moved into a forged assertion, the original (unsigned now) in its ds:Object. */
export function wrappedInSignatureObject(genuine: string, forged: ResponseOptions): string {
  const original = parse(signedAssertionOf(genuine)).documentElement;
  const signature = childElements(original, DSIG, "Signature")[0]!;
  original.removeChild(signature);
  const object = signature.ownerDocument!.createElementNS(DSIG, "ds:Object");
  object.appendChild(original.cloneNode(true));
  signature.appendChild(object);
  const forgedAssertion = assertionXml(forged).replace(
    /(<saml:Issuer>[^<]*<\/saml:Issuer>)/,
    `$1${serialize(signature)}`,
  );
  return responseXml(forged, forgedAssertion);
}

/**
 * A genuine response for `realName` (an identity the attacker holds) with a comment cut into the
 * NameID after `victimPrefix`: canonicalisation drops comments, so both signatures still verify.
 */
export function commentInNameId(o: ResponseOptions, keys: IdpKeys, victimPrefix: string): string {
  const genuine = signedResponse(o, keys);
  return genuine.replace(
    `>${o.nameId}</saml:NameID>`,
    `>${victimPrefix}<!---->${o.nameId.slice(victimPrefix.length)}</saml:NameID>`,
  );
}

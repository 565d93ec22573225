import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { inflateRawSync } from "node:zlib";
import { SignedXml } from "xml-crypto";

/**
 * A test identity provider: a key pair and self-signed certificate made for the run (openssl),
 * and SAML responses built and signed here with xml-crypto, good or deliberately broken.
 */

export type IdpKeys = { privateKey: string; cert: string };

/** A fresh RSA key and a self-signed X.509 certificate (PEM). */
export function makeIdpKeys(commonName = "test-idp"): IdpKeys {
  const dir = mkdtempSync(path.join(os.tmpdir(), "saml-keys-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-sha256",
        "-days",
        "2",
        "-subj",
        `/CN=${commonName}`,
        "-keyout",
        "key.pem",
        "-out",
        "cert.pem",
      ],
      { cwd: dir, stdio: "ignore" },
    );
    return {
      privateKey: readFileSync(path.join(dir, "key.pem"), "utf8"),
      cert: readFileSync(path.join(dir, "cert.pem"), "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type ResponseOptions = {
  inResponseTo: string;
  /** The SP's ACS URL: used for Destination and Recipient unless overridden. */
  acsUrl: string;
  audience: string;
  nameId: string;
  role?: string | string[];
  roleAttribute?: string;
  idpEntityId?: string;
  destination?: string;
  recipient?: string;
  /** Validity window; defaults to now − 1 min … now + 5 min. */
  notBefore?: Date;
  notOnOrAfter?: Date;
  issueInstant?: Date;
  responseId?: string;
  assertionId?: string;
};

const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");
const xmlText = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function samlId(): string {
  return `_${randomBytes(16).toString("hex")}`;
}

export function assertionXml(o: ResponseOptions): string {
  const now = new Date();
  const notBefore = o.notBefore ?? new Date(now.getTime() - 60_000);
  const notOnOrAfter = o.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000);
  const issued = o.issueInstant ?? new Date(Math.min(now.getTime(), notOnOrAfter.getTime() - 60_000));
  const roles = o.role === undefined ? [] : Array.isArray(o.role) ? o.role : [o.role];
  const attribute = roles.length
    ? `<saml:AttributeStatement><saml:Attribute Name="${xmlText(o.roleAttribute ?? "role")}">${roles
        .map((r) => `<saml:AttributeValue>${xmlText(r)}</saml:AttributeValue>`)
        .join("")}</saml:Attribute></saml:AttributeStatement>`
    : "";
  return (
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${o.assertionId ?? samlId()}" Version="2.0" IssueInstant="${iso(issued)}">` +
    `<saml:Issuer>${xmlText(o.idpEntityId ?? "https://idp.example.test")}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${xmlText(o.nameId)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
    `<saml:SubjectConfirmationData InResponseTo="${o.inResponseTo}" NotOnOrAfter="${iso(notOnOrAfter)}" Recipient="${xmlText(o.recipient ?? o.acsUrl)}"/>` +
    `</saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${iso(notBefore)}" NotOnOrAfter="${iso(notOnOrAfter)}">` +
    `<saml:AudienceRestriction><saml:Audience>${xmlText(o.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(issued)}" SessionIndex="${samlId()}"><saml:AuthnContext>` +
    `<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>` +
    `</saml:AuthnContext></saml:AuthnStatement>${attribute}</saml:Assertion>`
  );
}

export function responseXml(o: ResponseOptions, assertion: string): string {
  return (
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ` +
    `ID="${o.responseId ?? samlId()}" Version="2.0" IssueInstant="${iso(new Date())}" Destination="${xmlText(o.destination ?? o.acsUrl)}" InResponseTo="${o.inResponseTo}">` +
    `<saml:Issuer>${xmlText(o.idpEntityId ?? "https://idp.example.test")}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `${assertion}</samlp:Response>`
  );
}

/** How a test IdP signs: RSA-SHA256 as real IdPs do, or the legacy SHA-1 the service must refuse. */
export type SignatureHash = "sha256" | "sha1";
const SIGNATURE_ALGORITHMS = {
  sha256: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
  sha1: "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
} as const;
const DIGEST_ALGORITHMS = {
  sha256: "http://www.w3.org/2001/04/xmlenc#sha256",
  sha1: "http://www.w3.org/2000/09/xmldsig#sha1",
} as const;

/** Enveloped RSA signature (SHA-256 unless told) on the element `localName`, placed right after its Issuer. */
export function signElement(
  xml: string,
  localName: "Assertion" | "Response",
  keys: IdpKeys,
  hash: SignatureHash = "sha256",
  digest: SignatureHash = hash,
): string {
  const sig = new SignedXml({
    privateKey: keys.privateKey,
    publicCert: keys.cert,
    signatureAlgorithm: SIGNATURE_ALGORITHMS[hash],
    canonicalizationAlgorithm: "http://www.w3.org/2001/10/xml-exc-c14n#",
  });
  const element = `//*[local-name(.)='${localName}']`;
  sig.addReference({
    xpath: element,
    transforms: ["http://www.w3.org/2000/09/xmldsig#enveloped-signature", "http://www.w3.org/2001/10/xml-exc-c14n#"],
    digestAlgorithm: DIGEST_ALGORITHMS[digest],
  });
  sig.computeSignature(xml, { location: { reference: `${element}/*[local-name(.)='Issuer']`, action: "after" } });
  return sig.getSignedXml();
}

/** A response as a real IdP sends it: the assertion signed, then the whole response signed. */
export function signedResponse(o: ResponseOptions, keys: IdpKeys, hash: SignatureHash = "sha256"): string {
  const assertion = signElement(assertionXml(o), "Assertion", keys, hash);
  return signElement(responseXml(o, assertion), "Response", keys, hash);
}

export function encodeResponse(xml: string): string {
  return Buffer.from(xml, "utf8").toString("base64");
}

/** The ID of the AuthnRequest in an HTTP-Redirect binding URL (what InResponseTo must name). */
export function authnRequestIdFromRedirect(location: string): string {
  const request = new URL(location).searchParams.get("SAMLRequest");
  if (!request) throw new Error(`no SAMLRequest in ${location}`);
  const xml = inflateRawSync(Buffer.from(request, "base64")).toString("utf8");
  const id = /\sID="([^"]+)"/.exec(xml)?.[1];
  if (!id) throw new Error("no ID in the AuthnRequest");
  return id;
}

/** The `name=value` of the pre-login cookie that GET /admin/saml/login sets (binds the sign-in to this browser). */
export function samlLoginCookie(res: { headers: Record<string, unknown> }): string {
  const cookies = ([] as string[]).concat((res.headers["set-cookie"] as string[] | string | undefined) ?? []);
  const cookie = cookies.find((c) => c.startsWith("scim_admin_saml="));
  if (!cookie) throw new Error("no scim_admin_saml cookie was set");
  return cookie.split(";")[0]!;
}

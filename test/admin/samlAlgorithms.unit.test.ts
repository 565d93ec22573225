import { describe, expect, it } from "vitest";
import { requireStrongAlgorithms } from "../../src/http/admin/auth/samlAlgorithms.js";

describe("SAML signature algorithms", () => {
  const sig = (alg: string, prefix = "ds:") => `<${prefix}SignatureMethod Algorithm="${alg}"/>`;
  const digest = (alg: string) => `<ds:DigestMethod Algorithm="${alg}"></ds:DigestMethod>`;
  const RSA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
  const SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256";
  it.each<[string, string, boolean]>([
    ["RSA-SHA256 over SHA-256", sig(RSA256) + digest(SHA256), true],
    ["no prefix, single quotes", `<SignatureMethod Algorithm='${RSA256}'/>` + digest(SHA256), true],
    ["RSA-SHA1", sig("http://www.w3.org/2000/09/xmldsig#rsa-sha1") + digest(SHA256), false],
    ["SHA-1 digest", sig(RSA256) + digest("http://www.w3.org/2000/09/xmldsig#sha1"), false],
    [
      "a second, weak signature further in",
      sig(RSA256) + digest(SHA256) + sig("http://www.w3.org/2000/09/xmldsig#rsa-sha1"),
      false,
    ],
    ["no Algorithm at all", "<ds:SignatureMethod/>", false],
    [
      "an entity-encoded algorithm (not compared decoded)",
      sig("http://www.w3.org/2001/04/xmldsig-more&#x23;rsa-sha256"),
      false,
    ],
    [
      "a quoted '>' hiding the Algorithm from a naive scan",
      `<ds:SignatureMethod x=">" Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/>`,
      false,
    ],
    ["an unparseable element", `<ds:SignatureMethod Algorithm=${RSA256}/>`, false],
  ])("%s", (_name, xml, ok) => {
    const refused = (() => {
      try {
        requireStrongAlgorithms(xml);
        return false;
      } catch {
        return true;
      }
    })();
    expect(refused).toBe(!ok);
  });
});

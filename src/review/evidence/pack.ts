import { createHash, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Transform, type Readable, type Writable } from "node:stream";
import { finished, pipeline } from "node:stream/promises";
import tar from "tar-stream";
import type { Database } from "../../db/database.js";
import { DesiredAccess } from "../../mapping/desiredAccess.js";
import type { AccessReportOptions } from "../access/report.js";
import { checkEvidenceChains, manifestChainProblems, type ChainSummary, type EvidenceChains } from "./chains.js";
import { EVIDENCE_SECTIONS, type EvidenceSection, type EvidenceWindow } from "./sections.js";

/**
 * The evidence pack (docs/access-review.md, "Evidence"): a tar of the sections' files, each written
 * to a temporary file first (a tar header needs its size; the files can be large, memory cannot),
 * with manifest.json (every file's SHA-256 and controls, the heads of the log's and the campaign
 * decisions' chains) and manifest.sig,
 * the manifest's Ed25519 signature.
 */

const MANIFEST = "manifest.json";
const SIGNATURE = "manifest.sig";

type ManifestFile = { path: string; sha256: string; bytes: number; description: string; controls: string[] };
export type Manifest = {
  format: "scim-connector-evidence/1";
  window: { from: string; to: string };
  generatedAt: string;
  /** The reconciliation log's chain as verified when the pack was written. */
  chain: ChainSummary;
  /** The campaign decisions' chain, likewise. */
  decisionsChain: ChainSummary;
  sections: { name: string; files: ManifestFile[] }[];
  publicKey: string;
};

export type EvidenceDeps = { db: Database; mappingFile?: string; signingKey: KeyObject; now: () => Date };

/** A transform that hashes and counts what passes through it. */
function hashing(): Transform & { digest(): { sha256: string; bytes: number } } {
  const hash = createHash("sha256");
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  return Object.assign(stream, { digest: () => ({ sha256: hash.digest("hex"), bytes }) });
}

async function writeSection(
  deps: EvidenceDeps,
  access: AccessReportOptions,
  dir: string,
  section: EvidenceSection,
  window: EvidenceWindow,
) {
  const files: ManifestFile[] = [];
  for (const file of section.files) {
    const target = path.join(dir, file.path);
    await mkdir(path.dirname(target), { recursive: true });
    const sink = createWriteStream(target);
    const hasher = hashing();
    hasher.pipe(sink);
    await file.write({ db: deps.db, access, window }, hasher);
    hasher.end();
    await finished(sink);
    files.push({ path: file.path, ...hasher.digest(), description: file.description, controls: file.controls });
  }
  return { name: section.name, files };
}

/**
 * Writes the signed pack for `window` to `out` as a tar stream; resolves with its manifest. The
 * chains' verdicts are those the caller checked (checkEvidenceChains, which refuses an unverified
 * chain unless accepted), else checked here and recorded whatever they say.
 */
export async function writeEvidencePack(
  deps: EvidenceDeps,
  window: EvidenceWindow,
  out: Writable,
  checked?: EvidenceChains,
): Promise<Manifest> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "scim-connector-evidence-"));
  try {
    const { chain, decisionsChain } = checked ?? (await checkEvidenceChains(deps.db, true)).chains;
    const sections = [];
    // The mapping in force as recorded (the pack's copy of it, and the access report's reasons), parsed once per pack.
    const access = { db: deps.db, desired: DesiredAccess.recordedOnly(deps.mappingFile) };
    for (const section of EVIDENCE_SECTIONS) sections.push(await writeSection(deps, access, dir, section, window));
    const manifest: Manifest = {
      format: "scim-connector-evidence/1",
      window: { from: window.from.toISOString(), to: window.to.toISOString() },
      generatedAt: deps.now().toISOString(),
      chain,
      decisionsChain,
      sections,
      publicKey: createPublicKey(deps.signingKey).export({ type: "spki", format: "pem" }).toString(),
    };
    const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    const signature = Buffer.from(`${sign(null, manifestBytes, deps.signingKey).toString("base64")}\n`);

    const pack = tar.pack();
    const written = pipeline(pack, out);
    const mtime = new Date(manifest.generatedAt);
    for (const section of sections)
      for (const file of section.files) {
        const entry = pack.entry({ name: file.path, size: (await stat(path.join(dir, file.path))).size, mtime });
        await pipeline(createReadStream(path.join(dir, file.path)), entry);
      }
    pack.entry({ name: MANIFEST, mtime }, manifestBytes);
    pack.entry({ name: SIGNATURE, mtime }, signature);
    pack.finalize();
    await written;
    return manifest;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export type PackVerdict = { ok: boolean; problems: string[]; manifest?: Manifest; keyFromPack: boolean };

/**
 * Checks a pack: the manifest's signature, and every file's SHA-256; files missing, not listed or
 * present more than once fail, and so does a chain the manifest records as not verified (the pack
 * cannot vouch for it). The signature is checked with `signer`, the operator's public key; with
 * "embedded", with the key the manifest names, which proves only that the pack is whole; with
 * neither, with that key too, but the pack then fails: anyone who changes a pack can re-sign it and
 * name their own key.
 */
export async function verifyEvidencePack(input: Readable, signer?: KeyObject | "embedded"): Promise<PackVerdict> {
  const publicKey = signer === "embedded" ? undefined : signer;
  const hashes = new Map<string, string>();
  // Every name once: with two copies, which one a reader sees depends on the tool (`tar -x` keeps the last).
  const copies = new Map<string, number>();
  let manifestBytes: Buffer | undefined;
  let signatureText: string | undefined;
  const extract = tar.extract();
  const reading = (async () => {
    for await (const entry of extract) {
      copies.set(entry.header.name, (copies.get(entry.header.name) ?? 0) + 1);
      const hash = createHash("sha256");
      const chunks: Buffer[] = [];
      const small = entry.header.name === MANIFEST || entry.header.name === SIGNATURE;
      for await (const chunk of entry as AsyncIterable<Buffer>) {
        hash.update(chunk);
        if (small) chunks.push(chunk);
      }
      if (entry.header.name === MANIFEST) manifestBytes = Buffer.concat(chunks);
      else if (entry.header.name === SIGNATURE) signatureText = Buffer.concat(chunks).toString("utf8");
      else hashes.set(entry.header.name, hash.digest("hex"));
    }
  })();
  try {
    await Promise.all([pipeline(input, extract), reading]);
  } catch (error) {
    return { ok: false, problems: [`not a readable pack: ${(error as Error).message}`], keyFromPack: !publicKey };
  }
  if (!manifestBytes || !signatureText)
    return {
      ok: false,
      problems: [`the pack has no ${manifestBytes ? SIGNATURE : MANIFEST}`],
      keyFromPack: !publicKey,
    };
  const problems: string[] = [];
  for (const [name, count] of copies) if (count > 1) problems.push(`${name} appears ${count} times in the pack`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(manifestBytes.toString("utf8")) as Manifest;
  } catch {
    return { ok: false, problems: [...problems, `${MANIFEST} is not JSON`], keyFromPack: !publicKey };
  }
  let key: KeyObject;
  try {
    key = publicKey ?? createPublicKey(manifest.publicKey);
  } catch {
    return {
      ok: false,
      problems: [...problems, `${MANIFEST} names no readable public key`],
      keyFromPack: true,
      manifest,
    };
  }
  if (!verify(null, manifestBytes, key, Buffer.from(signatureText.trim(), "base64")))
    problems.push(
      `the signature of ${MANIFEST} does not verify with ${publicKey ? "the given public key" : "the key it names"}`,
    );
  const listed = new Set<string>();
  for (const section of manifest.sections ?? [])
    for (const file of section.files) {
      listed.add(file.path);
      const actual = hashes.get(file.path);
      if (actual === undefined) problems.push(`${file.path} is listed but missing`);
      else if (actual !== file.sha256) problems.push(`${file.path} does not match its SHA-256 in the manifest`);
    }
  for (const name of hashes.keys()) if (!listed.has(name)) problems.push(`${name} is not listed in the manifest`);
  problems.push(...manifestChainProblems(manifest, MANIFEST));
  if (signer === undefined)
    problems.push(
      "no public key was given, so who signed the pack was not checked: the key it names is whichever key its last signer put there",
    );
  return { ok: problems.length === 0, problems, manifest, keyFromPack: !publicKey };
}

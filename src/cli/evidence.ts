import { createPublicKey, type KeyObject } from "node:crypto";
import { createReadStream, createWriteStream, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { Env } from "../config/env.js";
import type { Database } from "../db/database.js";
import { verifyEvidencePack } from "../review/evidence/pack.js";
import { parseEvidenceWindow } from "../review/evidence/window.js";
import { UnverifiedChainError } from "../review/evidence/chains.js";
import { createEvidence } from "../review/evidence/frontDoor.js";
import { systemClock } from "../clock.js";

/**
 * `scim-connector evidence --from DATE --to DATE [--out FILE] [--accept-unverified-chain]` writes a
 * signed evidence pack (none, exit 1, while a chain does not verify, unless accepted);
 * `scim-connector evidence verify FILE --public-key PEM|FILE | --trust-embedded-key` checks one (exit 1 when it fails).
 */
export async function evidenceCommand(env: Env, db: Database, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      from: { type: "string" },
      to: { type: "string" },
      out: { type: "string" },
      "accept-unverified-chain": { type: "boolean" },
    },
  });
  if (!env.EVIDENCE_SIGNING_KEY) {
    process.stderr.write(
      "EVIDENCE_SIGNING_KEY is not set: give it an Ed25519 private key (PEM text or a file path); make one with: openssl genpkey -algorithm ed25519 -out evidence-key.pem\n",
    );
    process.exitCode = 78;
    return;
  }
  const evidence = createEvidence({
    db,
    clock: systemClock,
    mappingFile: env.MAPPING_FILE,
    signingKey: env.EVIDENCE_SIGNING_KEY,
  });
  const window = parseEvidenceWindow(values.from, values.to);
  const file =
    values.out ?? `evidence-${window.from.toISOString().slice(0, 10)}-${window.to.toISOString().slice(0, 10)}.tar`;
  let checked;
  try {
    checked = await evidence.checkChains(values["accept-unverified-chain"] ?? false);
  } catch (error) {
    if (!(error instanceof UnverifiedChainError)) throw error;
    process.stderr.write(
      `No pack written: ${error.notices.join("; ")}. A pack written now cannot vouch for it, and \`scim-connector evidence verify\` fails on it; \`scim-connector audit verify\` names the bad entries. To write it anyway, pass --accept-unverified-chain.\n`,
    );
    process.exitCode = 1;
    return;
  }
  const manifest = await evidence.writePack(window, createWriteStream(file), checked.chains);
  if (checked.notices.length > 0)
    process.stderr.write(
      `${file} cannot vouch for the log: ${checked.notices.join("; ")}. \`scim-connector evidence verify\` fails on this pack.\n`,
    );
  const files = manifest.sections.reduce((n, s) => n + s.files.length, 0);
  console.log(
    `Wrote ${file}: ${files} files in ${manifest.sections.length} sections, signed; log chain ${manifest.chain.verified ? `verified, head ${manifest.chain.headHash}` : `NOT verified: ${manifest.chain.problem}`}; decisions chain ${manifest.decisionsChain.verified ? `verified, head ${manifest.decisionsChain.headHash}` : `NOT verified: ${manifest.decisionsChain.problem}`}.`,
  );
}

/**
 * `evidence verify`: needs no database and no configuration. The signer is checked with
 * --public-key; without it the pack fails (exit 1) unless --trust-embedded-key asks to check only
 * that it is whole, with the key it names.
 */
export async function evidenceVerifyCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: { "public-key": { type: "string" }, "trust-embedded-key": { type: "boolean" } },
    allowPositionals: true,
  });
  const [file] = positionals;
  if (!file)
    throw new Error(
      "evidence verify needs the pack's file: scim-connector evidence verify FILE --public-key PEM|FILE (or --trust-embedded-key)",
    );
  if (values["public-key"] && values["trust-embedded-key"])
    throw new Error("evidence verify takes --public-key or --trust-embedded-key, not both");
  const signer = values["public-key"]
    ? readPublicKey(values["public-key"])
    : values["trust-embedded-key"]
      ? "embedded"
      : undefined;
  const verdict = await verifyEvidencePack(createReadStream(file), signer);
  if (!verdict.ok) {
    const hint = signer
      ? ""
      : "Pass --public-key with the operator's public key (PEM text or file), or --trust-embedded-key to check only that the pack is whole.\n";
    process.stderr.write(`${file}: NOT VERIFIED\n${verdict.problems.map((p) => `  - ${p}\n`).join("")}${hint}`);
    process.exitCode = 1;
    return;
  }
  const files = verdict.manifest!.sections.reduce((n, s) => n + s.files.length, 0);
  console.log(
    `${file}: verified (${files} files, signature ${verdict.keyFromPack ? "checked with the key the pack names, as --trust-embedded-key asked: the pack is whole, but who signed it was not checked" : "checked with the given public key"}).`,
  );
}

function readPublicKey(value: string): KeyObject {
  const pem = value.includes("-----BEGIN") ? value : readFileSync(value, "utf8");
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== "ed25519") throw new Error("--public-key must be an Ed25519 public key (PEM)");
  return key;
}

import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import request from "supertest";
import { verifyEvidencePack, writeEvidencePack } from "../../src/admin/evidence/pack.js";
import { ADMIN_TOKEN, emulatorState, idp, startStack, waitForQueueIdle, type Stack } from "../support/stack.js";

/**
 * The evidence pack over a real reconcile workload against the emulator: `scim-connector evidence`
 * writes a signed tar that `evidence verify` accepts with the operator's public key; one byte
 * changed, or a pack signed with another key, fails; its files say what the platform was told.
 */

const pem = (pair: ReturnType<typeof generateKeyPairSync>) => ({
  privateKey: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  publicKey: pair.publicKey.export({ type: "spki", format: "pem" }).toString(),
});

async function untar(bytes: Buffer): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const extract = tar.extract();
  Readable.from([bytes]).pipe(extract);
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry as AsyncIterable<Buffer>) chunks.push(chunk);
    files.set(entry.header.name, Buffer.concat(chunks).toString("utf8"));
  }
  return files;
}

/** The cells of one CSV line as a spreadsheet reads them (exported cells are always quoted, "" is a quote). */
function csvCells(line: string): string[] {
  return [...line.matchAll(/(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g)].map((m) =>
    m[1] !== undefined ? m[1].replace(/""/g, '"') : m[2]!,
  );
}

describe("the evidence pack", () => {
  let stack: Stack;
  let dir: string;
  const operator = pem(generateKeyPairSync("ed25519"));
  const stranger = pem(generateKeyPairSync("ed25519"));
  const from = new Date(Date.now() - 3_600_000).toISOString();
  let to: string;

  function cli(args: string[], env: Record<string, string> = {}) {
    const root = path.resolve(import.meta.dirname, "../..");
    return promisify(execFile)(process.execPath, [path.join(root, "bin/scim-connector.js"), ...args], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: stack.database.url,
        MAPPING_FILE: stack.mappingFile,
        LOG_LEVEL: "error",
        ...env,
      },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        stdout: error.stdout,
        stderr: error.stderr,
      }),
    );
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "evidence-test-"));
    await writeFile(path.join(dir, "operator.pub"), operator.publicKey);
    stack = await startStack({ env: { EVIDENCE_SIGNING_KEY: operator.privateKey } });
    const api = idp(stack);
    const users = [];
    for (const name of ["ann", "bob", "cid"]) users.push(await api.createUser(`${name}@example.com`));
    const group = await api.createGroup("Platform Admins", users);
    await waitForQueueIdle(stack, { deferred: "wait" });
    await api.patch(`/Groups/${group}`, [{ op: "remove", path: `members[value eq "${users[0]}"]` }]);
    await waitForQueueIdle(stack, { deferred: "wait" });
    to = new Date(Date.now() + 60_000).toISOString();
  }, 90_000);
  afterAll(async () => stack?.close());

  it("scim-connector evidence writes a pack that evidence verify accepts, and its files say what happened", async () => {
    const out = path.join(dir, "pack.tar");
    const written = await cli(["evidence", "--from", from, "--to", to, "--out", out], {
      EVIDENCE_SIGNING_KEY: operator.privateKey,
    });
    expect(written).toMatchObject({ code: 0 });
    expect(written.stdout).toContain("log chain verified");
    const verified = await cli(["evidence", "verify", out, "--public-key", path.join(dir, "operator.pub")]);
    expect(verified).toMatchObject({ code: 0 });
    expect(verified.stdout).toContain("verified (7 files, signature checked with the given public key)");

    const files = await untar(await readFile(out));
    expect([...files.keys()].sort()).toEqual([
      "access/access-at-end.csv",
      "access/access-at-start.csv",
      "changes/changes.csv",
      "manifest.json",
      "manifest.sig",
      "mapping/mapping-changes.csv",
      "mapping/mapping-in-force.yaml",
      "revocations/latency.json",
      "revocations/revocations.csv",
    ]);
    // The access report at the end is what the emulator holds; at the start (before any user), nothing.
    const holders = (await emulatorState(stack)).dashboardUsers.map((u) => u.userName).sort();
    expect(holders).toEqual(["bob@example.com", "cid@example.com"]);
    const endUsers = new Set(
      files
        .get("access/access-at-end.csv")!
        .trim()
        .split("\r\n")
        .slice(1)
        .map((l) => csvCells(l)[0]),
    );
    expect([...endUsers].sort()).toEqual(holders);
    expect(files.get("access/access-at-start.csv")!.trim().split("\r\n")).toHaveLength(1);
    // ann's removal is a revocation, with the time the IdP's change was queued and its latency.
    const revocations = files.get("revocations/revocations.csv")!.trim().split("\r\n").slice(1);
    expect(revocations).toHaveLength(1);
    const [, userName, what, why, queuedAt, appliedAt, latencyMs] = csvCells(revocations[0]!);
    expect([userName, what]).toEqual(["ann@example.com", "account removed; companyPermissions: removed admin"]);
    expect(why).toContain("Platform Admins");
    expect(Number(latencyMs)).toBe(new Date(appliedAt!).getTime() - new Date(queuedAt!).getTime());
    expect(JSON.parse(files.get("revocations/latency.json")!)).toMatchObject({ reductions: 1, withoutQueueTime: 0 });
    const changes = files.get("changes/changes.csv")!;
    expect(changes.match(/account created/g)).toHaveLength(3);
    const manifest = JSON.parse(files.get("manifest.json")!) as { chain: { verified: boolean; headHash: string } };
    const [head] = await stack.service.db.query<{ head_hash: string }>(`SELECT head_hash FROM audit_chains`);
    expect(manifest.chain).toMatchObject({ verified: true, headHash: head!.head_hash });
  });

  it("one byte changed in a file fails verification, naming the file", async () => {
    const out = path.join(dir, "pack.tar");
    const bytes = await readFile(out);
    const at = bytes.indexOf("account created");
    expect(at).toBeGreaterThan(0);
    bytes[at] = "A".charCodeAt(0);
    const tampered = path.join(dir, "tampered.tar");
    await writeFile(tampered, bytes);
    const verified = await cli(["evidence", "verify", tampered, `--public-key=${operator.publicKey}`]);
    expect(verified.code).toBe(1);
    expect(verified.stderr).toContain("changes/changes.csv does not match its SHA-256 in the manifest");
  });

  it("a pack signed with another key fails against the operator's public key", async () => {
    const { createPrivateKey } = await import("node:crypto");
    const out = path.join(dir, "stranger.tar");
    await writeEvidencePack(
      { db: stack.service.db, signingKey: createPrivateKey(stranger.privateKey), now: () => new Date() },
      { from: new Date(from), to: new Date(to) },
      createWriteStream(out),
    );
    const verified = await cli(["evidence", "verify", out, `--public-key=${operator.publicKey}`]);
    expect(verified.code).toBe(1);
    expect(verified.stderr).toContain("the signature of manifest.json does not verify with the given public key");
    // The same pack is whole: with the key it names, it verifies.
    expect((await cli(["evidence", "verify", out])).code).toBe(0);
  });

  it("the admin API answers GET and POST /admin/api/evidence with the signed pack, and a bad window with 400", async () => {
    const { createPublicKey } = await import("node:crypto");
    const query = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
    for (const method of ["GET", "POST"]) {
      const res = await fetch(`${stack.service.url}/admin/api/evidence?${query}`, {
        method,
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-disposition")).toMatch(/attachment; filename="evidence-.*\.tar"/);
      const body = Buffer.from(await res.arrayBuffer());
      const verdict = await verifyEvidencePack(Readable.from([body]), createPublicKey(operator.publicKey));
      expect(verdict).toMatchObject({ ok: true, problems: [] });
      expect(verdict.manifest!.sections.map((s) => s.name)).toEqual(["access", "changes", "revocations", "mapping"]);
    }
    const bad = await request(stack.service.url)
      .get(`/admin/api/evidence?from=yesterday&to=${encodeURIComponent(to)}`)
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("from must be an ISO 8601 date");
    const unauthenticated = await request(stack.service.url).get(`/admin/api/evidence?${query}`);
    expect(unauthenticated.status).toBe(401);
  });
});

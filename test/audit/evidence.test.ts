import { createHash, createPublicKey, generateKeyPairSync, verify } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import request from "supertest";
import { verifyEvidencePack, writeEvidencePack } from "../../src/review/evidence/pack.js";
import { csrfFrom, signInLocally } from "../support/adminHarness.js";
import { requestTimes } from "../support/emulator.js";
import { independentChain } from "./independentChain.js";
import { runCli } from "../support/cli.js";
import {
  ADMIN_TOKEN,
  adminApi,
  emulatorState,
  idp,
  startStack,
  waitForQueueIdle,
  type Stack,
} from "../support/stack.js";

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

/** A tar's members in order, as bytes: the pack read without the product's verifier. */
async function tarMembers(bytes: Buffer): Promise<{ name: string; body: Buffer }[]> {
  const members: { name: string; body: Buffer }[] = [];
  const extract = tar.extract();
  Readable.from([bytes]).pipe(extract);
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry as AsyncIterable<Buffer>) chunks.push(chunk);
    members.push({ name: entry.header.name, body: Buffer.concat(chunks) });
  }
  return members;
}

async function tarOf(members: { name: string; body: Buffer }[]): Promise<Buffer> {
  const packed = tar.pack();
  for (const m of members) packed.entry({ name: m.name }, m.body);
  packed.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of packed as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe("the evidence pack", () => {
  let stack: Stack;
  let dir: string;
  const operator = pem(generateKeyPairSync("ed25519"));
  const stranger = pem(generateKeyPairSync("ed25519"));
  const from = new Date(Date.now() - 3_600_000).toISOString();
  let to: string;
  let campaignId: string;
  let removalSentAt: number;
  let removalAckedAt: number;

  const cli = (args: string[], env: Record<string, string> = {}) => runCli(stack, args, env);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "evidence-test-"));
    await writeFile(path.join(dir, "operator.pub"), operator.publicKey);
    stack = await startStack({ env: { EVIDENCE_SIGNING_KEY: operator.privateKey } });
    const api = idp(stack);
    const users = [];
    for (const name of ["ann", "bob", "cid"]) users.push(await api.createUser(`${name}@example.com`));
    const group = await api.createGroup("Platform Admins", users);
    await waitForQueueIdle(stack, { deferred: "wait" });
    // The IdP's request that revokes ann's access, timed here: sent, then acknowledged.
    removalSentAt = Date.now();
    await api.patch(`/Groups/${group}`, [{ op: "remove", path: `members[value eq "${users[0]}"]` }]);
    removalAckedAt = Date.now();
    await waitForQueueIdle(stack, { deferred: "wait" });
    // A campaign over what bob and cid hold: bob's admin kept, cid's revoked (and applied).
    const admin = (path: string, body: object) =>
      request(stack.service.url).post(`/admin/api${path}`).set("Authorization", `Bearer ${ADMIN_TOKEN}`).send(body);
    const started = await admin("/campaigns", {
      name: "Quarterly admins",
      scope: { kind: "company-admins" },
      dueAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      reviewers: [{ name: "ciso@example.com" }],
      fallbackReviewer: "security@example.com",
    });
    expect(started.status).toBe(201);
    campaignId = started.body.id as string;
    const items = (await adminApi(stack)(`/campaigns/${campaignId}/items?reviewer=all`)).body.items as {
      id: string;
      userName: string;
    }[];
    const itemOf = (userName: string) => items.find((i) => i.userName === userName)!.id;
    const decide = (userName: string, decision: string, comment: string) =>
      admin(`/campaigns/${campaignId}/decisions`, {
        as: "ciso@example.com",
        decision,
        comment,
        items: [itemOf(userName)],
      });
    expect((await decide("bob@example.com", "keep", "on call, needs admin")).body).toMatchObject({ decided: 1 });
    expect((await decide("cid@example.com", "revoke", "left the platform team")).body).toMatchObject({ decided: 1 });
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
    expect(verified.stdout).toContain("verified (11 files, signature checked with the given public key)");

    const files = await untar(await readFile(out));
    expect([...files.keys()].sort()).toEqual([
      "access/access-at-end.csv",
      "access/access-at-start.csv",
      "access/not-managed-by-idp.csv",
      "campaigns/campaign-revocations.csv",
      "campaigns/campaigns.csv",
      "campaigns/decisions.csv",
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
    const endRows = files
      .get("access/access-at-end.csv")!
      .trim()
      .split("\r\n")
      .slice(1)
      .map((l) => csvCells(l));
    // bob holds his grants; cid's account stays without the admin grant the campaign revoked, which
    // shows only as a denied row (the last column says by whom).
    expect([...new Set(endRows.filter((r) => !r.at(-1)).map((r) => r[0]))]).toEqual(["bob@example.com"]);
    const denied = endRows.filter((r) => r.at(-1));
    expect(denied.map((r) => r[0])).toEqual(["cid@example.com"]);
    expect(denied[0]!.at(-1)).toMatch(
      /^revoked in campaign "Quarterly admins", by admin-api as ciso@example\.com, on /,
    );
    const cid = (await emulatorState(stack)).dashboardUsers.find((u) => u.userName === "cid@example.com")!;
    expect(cid.permissions.companyPermissions).toEqual([]);
    expect(files.get("access/access-at-start.csv")!.trim().split("\r\n")).toHaveLength(1);
    // ann's removal is a revocation, with the time the IdP's change was queued and its latency.
    const revocations = files.get("revocations/revocations.csv")!.trim().split("\r\n").slice(1);
    // ann's removal by the IdP, and cid's admin revoked in the campaign.
    expect(revocations.map((l) => csvCells(l)[1])).toEqual(["ann@example.com", "cid@example.com"]);
    const [, userName, what, why, queuedAt, appliedAt, latencyMs] = csvCells(revocations[0]!);
    expect([userName, what]).toEqual(["ann@example.com", "account removed; companyPermissions: removed admin"]);
    expect(why).toContain("Platform Admins");
    expect(Number(latencyMs)).toBe(new Date(appliedAt!).getTime() - new Date(queuedAt!).getTime());
    // The latency runs from the IdP's request, as the test saw it go and come back, to the platform's
    // answer: queued while the request was in flight, applied after the emulator received the call.
    expect(Date.parse(queuedAt!)).toBeGreaterThanOrEqual(removalSentAt);
    expect(Date.parse(queuedAt!)).toBeLessThanOrEqual(removalAckedAt);
    const annRemoved = await requestTimes(stack.emulator.url, new Date(removalSentAt), "DELETE");
    expect(annRemoved).toHaveLength(1);
    expect(Date.parse(appliedAt!)).toBeGreaterThanOrEqual(annRemoved[0]!);
    expect(JSON.parse(files.get("revocations/latency.json")!)).toMatchObject({ reductions: 2, withoutQueueTime: 0 });
    const changes = files.get("changes/changes.csv")!;
    expect(changes.match(/account created/g)).toHaveLength(3);
    const manifest = JSON.parse(files.get("manifest.json")!) as { chain: { verified: boolean; headHash: string } };
    const [head] = await stack.service.db.query<{ head_hash: string }>(
      `SELECT head_hash FROM audit_chains WHERE name = 'reconcile_log'`,
    );
    expect(manifest.chain).toMatchObject({ verified: true, headHash: head!.head_hash });
  });

  it("the campaigns section holds the campaign, every decision with its comment, and the revoke's time to the platform", async () => {
    const files = await untar(await readFile(path.join(dir, "pack.tar")));
    const rows = (file: string) =>
      files
        .get(file)!
        .trim()
        .split("\r\n")
        .map((l) => csvCells(l));
    const table = (file: string) => {
      const [header, ...body] = rows(file);
      return body.map((cells) => Object.fromEntries(header!.map((h, i) => [h, cells[i]])));
    };
    expect(table("campaigns/campaigns.csv")).toEqual([
      expect.objectContaining({
        campaignId,
        name: "Quarterly admins",
        scope: '{"kind":"company-admins"}',
        reviewers: "name:ciso@example.com",
        fallbackReviewer: "name:security@example.com",
        items: "2",
        kept: "1",
        revoked: "1",
        undecided: "0",
        closedAt: "",
      }),
    ]);
    const recorded = await stack.service.db.query<{ id: string; chain_hash: string; decided_at: Date }>(
      `SELECT id, chain_hash, decided_at FROM campaign_decisions ORDER BY id`,
    );
    expect(table("campaigns/decisions.csv")).toEqual([
      expect.objectContaining({
        decisionId: recorded[0]!.id,
        campaign: "Quarterly admins",
        userName: "bob@example.com",
        grant: "admin (company)",
        // What the item granted: one string here (a granular bundle lists its strings, one row for them all).
        permissions: "admin",
        count: "1",
        reviewer: "name:ciso@example.com",
        decision: "keep",
        decidedBy: "admin-api as ciso@example.com",
        decidedAt: recorded[0]!.decided_at.toISOString(),
        comment: "on call, needs admin",
        chainHash: recorded[0]!.chain_hash,
      }),
      expect.objectContaining({
        decisionId: recorded[1]!.id,
        userName: "cid@example.com",
        decision: "revoke",
        comment: "left the platform team",
        chainHash: recorded[1]!.chain_hash,
      }),
    ]);
    // The revoke reached the platform with the entry that took cid's admin away, after the decision.
    const [applied] = await stack.service.db.query<{ id: string; at: Date }>(
      `SELECT id, at FROM reconcile_log WHERE user_name = 'cid@example.com' AND action IN ('update', 'deprovision')
          AND outcome = 'succeeded' AND at >= $1 ORDER BY at, id LIMIT 1`,
      [recorded[1]!.decided_at],
    );
    expect(applied).toBeDefined();
    const [revoked] = table("campaigns/campaign-revocations.csv");
    expect(revoked).toMatchObject({
      decisionId: recorded[1]!.id,
      userName: "cid@example.com",
      grant: "admin (company)",
      decidedBy: "admin-api as ciso@example.com",
      comment: "left the platform team",
      appliedLogId: applied!.id,
      appliedAt: applied!.at.toISOString(),
      latencyMs: String(applied!.at.getTime() - recorded[1]!.decided_at.getTime()),
    });
    expect(table("campaigns/campaign-revocations.csv")).toHaveLength(1);
    const manifest = JSON.parse(files.get("manifest.json")!) as {
      decisionsChain: { verified: boolean; headHash: string; entries: number };
      sections: { name: string; files: { path: string; controls: string[] }[] }[];
    };
    expect(manifest.decisionsChain).toMatchObject({ verified: true, entries: 2, headHash: recorded[1]!.chain_hash });
    const section = manifest.sections.find((s) => s.name === "campaigns")!;
    expect(section.files.map((f) => [f.path, f.controls])).toEqual(
      ["campaigns/campaigns.csv", "campaigns/decisions.csv", "campaigns/campaign-revocations.csv"].map((p) => [
        p,
        ["SOC2 CC6.2", "SOC2 CC6.3", "ISO27001 A.5.18"],
      ]),
    );
  });

  it("holds what code written apart from the product checks: the signature, every member's SHA-256, the chain's head", async () => {
    const members = await tarMembers(await readFile(path.join(dir, "pack.tar")));
    const member = (name: string) => members.find((m) => m.name === name)!.body;
    const manifestBytes = member("manifest.json");
    const signature = Buffer.from(member("manifest.sig").toString("utf8").trim(), "base64");
    expect(verify(null, manifestBytes, createPublicKey(operator.publicKey), signature)).toBe(true);
    expect(verify(null, manifestBytes, createPublicKey(stranger.publicKey), signature)).toBe(false);
    const manifest = JSON.parse(manifestBytes.toString("utf8")) as {
      chain: { headId: string; headHash: string };
      sections: { files: { path: string; sha256: string; bytes: number }[] }[];
    };
    const listed = manifest.sections.flatMap((s) => s.files);
    // Every member but the manifest and its signature is listed once, and every listed file is there once.
    expect(members.map((m) => m.name).sort()).toEqual(
      [...listed.map((f) => f.path), "manifest.json", "manifest.sig"].sort(),
    );
    for (const file of listed) {
      const body = member(file.path);
      expect({ path: file.path, sha256: createHash("sha256").update(body).digest("hex"), bytes: body.length }).toEqual({
        path: file.path,
        sha256: file.sha256,
        bytes: file.bytes,
      });
    }
    // The head the manifest signs is the head of the log's entries as they are, hashed apart from the product.
    const [chain] = await stack.service.db.query<{ anchor_id: string; anchor_hash: string }>(
      `SELECT anchor_id, anchor_hash FROM audit_chains WHERE name = 'reconcile_log'`,
    );
    const rows = await stack.service.db.query<Record<string, unknown>>(
      `SELECT * FROM reconcile_log WHERE id > $1 AND id <= $2 ORDER BY id`,
      [chain!.anchor_id, manifest.chain.headId],
    );
    expect(independentChain(chain!.anchor_hash, rows).at(-1)).toBe(manifest.chain.headHash);
  });

  it("a pack with a member dropped, a member not listed added, or the chain's head edited fails verification, naming what", async () => {
    const members = await tarMembers(await readFile(path.join(dir, "pack.tar")));
    const verifyVariant = async (name: string, variant: { name: string; body: Buffer }[]) => {
      const file = path.join(dir, `${name}.tar`);
      await writeFile(file, await tarOf(variant));
      return cli(["evidence", "verify", file, "--public-key", path.join(dir, "operator.pub")]);
    };
    const dropped = await verifyVariant(
      "dropped",
      members.filter((m) => m.name !== "mapping/mapping-in-force.yaml"),
    );
    expect(dropped.code).toBe(1);
    expect(dropped.stderr).toContain("mapping/mapping-in-force.yaml is listed but missing");

    const added = await verifyVariant("added", [
      ...members,
      { name: "changes/changes-corrected.csv", body: Buffer.from("userName\r\nnobody@example.com\r\n") },
    ]);
    expect(added.code).toBe(1);
    expect(added.stderr).toContain("changes/changes-corrected.csv is not listed in the manifest");

    const edited = await verifyVariant(
      "head-edited",
      members.map((m) => {
        if (m.name !== "manifest.json") return m;
        const manifest = JSON.parse(m.body.toString("utf8")) as { chain: { headHash: string } };
        manifest.chain.headHash = "0".repeat(64);
        return { name: m.name, body: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`) };
      }),
    );
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain("the signature of manifest.json does not verify with the given public key");
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

  it("a pack holding a file twice fails verification, whichever copy matches the manifest", async () => {
    // A forged changes.csv ahead of the genuine one: `tar -x` keeps the last, a viewer may show the first.
    const original = await readFile(path.join(dir, "pack.tar"));
    const repacked = tar.pack();
    const extract = tar.extract();
    Readable.from([original]).pipe(extract);
    for await (const entry of extract) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry as AsyncIterable<Buffer>) chunks.push(chunk);
      const body = Buffer.concat(chunks);
      if (entry.header.name === "changes/changes.csv")
        repacked.entry(
          { name: entry.header.name },
          Buffer.from(body.toString("utf8").replace("account created", "nothing")),
        );
      repacked.entry({ name: entry.header.name, mtime: entry.header.mtime }, body);
    }
    repacked.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of repacked as AsyncIterable<Buffer>) chunks.push(chunk);
    const doubled = path.join(dir, "doubled.tar");
    await writeFile(doubled, Buffer.concat(chunks));
    const verified = await cli(["evidence", "verify", doubled, "--public-key", path.join(dir, "operator.pub")]);
    expect(verified.code).toBe(1);
    expect(verified.stderr).toContain("changes/changes.csv appears 2 times in the pack");
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
    // The same pack is whole: with the key it names, trusted explicitly, it verifies.
    expect((await cli(["evidence", "verify", out, "--trust-embedded-key"])).code).toBe(0);
  });

  it("a pack changed and re-signed with the changer's own key fails without --public-key unless the embedded key is trusted explicitly", async () => {
    const { createHash, createPrivateKey, sign } = await import("node:crypto");
    const original = await readFile(path.join(dir, "pack.tar"));
    const members: { name: string; body: Buffer }[] = [];
    const extract = tar.extract();
    Readable.from([original]).pipe(extract);
    for await (const entry of extract) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry as AsyncIterable<Buffer>) chunks.push(chunk);
      members.push({ name: entry.header.name, body: Buffer.concat(chunks) });
    }
    // The changer drops a line from changes.csv, puts its hash in the manifest with their own public key, and signs.
    const body = (name: string) => members.find((m) => m.name === name)!;
    const changes = body("changes/changes.csv");
    changes.body = Buffer.from(changes.body.toString("utf8").split("\r\n").slice(0, -2).join("\r\n") + "\r\n");
    const manifest = JSON.parse(body("manifest.json").body.toString("utf8")) as {
      sections: { files: { path: string; sha256: string; bytes: number }[] }[];
      publicKey: string;
    };
    const listed = manifest.sections.flatMap((s) => s.files).find((f) => f.path === "changes/changes.csv")!;
    listed.sha256 = createHash("sha256").update(changes.body).digest("hex");
    listed.bytes = changes.body.length;
    manifest.publicKey = stranger.publicKey;
    body("manifest.json").body = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    body("manifest.sig").body = Buffer.from(
      `${sign(null, body("manifest.json").body, createPrivateKey(stranger.privateKey)).toString("base64")}\n`,
    );
    const repacked = tar.pack();
    for (const m of members) repacked.entry({ name: m.name }, m.body);
    repacked.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of repacked as AsyncIterable<Buffer>) chunks.push(chunk);
    const resigned = path.join(dir, "resigned.tar");
    await writeFile(resigned, Buffer.concat(chunks));

    const plain = await cli(["evidence", "verify", resigned]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain("NOT VERIFIED");
    expect(plain.stderr).toContain("no public key was given");
    expect(plain.stderr).toContain("--public-key");
    expect(plain.stderr).toContain("--trust-embedded-key");
    const trusted = await cli(["evidence", "verify", resigned, "--trust-embedded-key"]);
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toContain("who signed it was not checked");
    expect((await cli(["evidence", "verify", resigned, `--public-key=${operator.publicKey}`])).code).toBe(1);
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
      expect(verdict.manifest!.sections.map((s) => s.name)).toEqual([
        "access",
        "changes",
        "revocations",
        "mapping",
        "campaigns",
      ]);
    }
    const bad = await request(stack.service.url)
      .get(`/admin/api/evidence?from=yesterday&to=${encodeURIComponent(to)}`)
      .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("from must be an ISO 8601 date");
    const unauthenticated = await request(stack.service.url).get(`/admin/api/evidence?${query}`);
    expect(unauthenticated.status).toBe(401);
  });

  it("a pack written over a tampered log fails evidence verify in plain words, and every download says so before it starts", async () => {
    const db = stack.service.db;
    const [target] = await db.query<{ id: string; outcome: string }>(
      `SELECT id, outcome FROM reconcile_log WHERE chain_hash IS NOT NULL ORDER BY id LIMIT 1 OFFSET 1`,
    );
    await db.query(`UPDATE reconcile_log SET outcome = 'failed' WHERE id = $1`, [target!.id]);
    try {
      expect((await cli(["audit", "verify"])).code).toBe(1);
      const broken = `the reconciliation log's chain did not verify when the pack was written (entry ${target!.id} does not match its hash:`;

      // The attack of issue 34: the pack's own verify said "verified", exit 0.
      const { createPrivateKey } = await import("node:crypto");
      const over = path.join(dir, "over-tampered.tar");
      await writeEvidencePack(
        { db, signingKey: createPrivateKey(operator.privateKey), now: () => new Date() },
        { from: new Date(from), to: new Date(to) },
        createWriteStream(over),
      );
      const verified = await cli(["evidence", "verify", over, "--public-key", path.join(dir, "operator.pub")]);
      expect(verified.code).toBe(1);
      expect(verified.stderr).toContain("NOT VERIFIED");
      expect(verified.stderr).toContain(broken);
      expect(verified.stdout).not.toContain("verified");

      // The CLI writes nothing unless told to, and says why; told to, it writes and says so again.
      const notice = `the reconciliation log's chain does not verify (entry ${target!.id} does not match its hash:`;
      const out = path.join(dir, "unverified.tar");
      const refused = await cli(["evidence", "--from", from, "--to", to, "--out", out], {
        EVIDENCE_SIGNING_KEY: operator.privateKey,
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(notice);
      expect(refused.stderr).toContain("--accept-unverified-chain");
      await expect(readFile(out)).rejects.toThrow(/ENOENT/);
      const written = await cli(["evidence", "--from", from, "--to", to, "--out", out, "--accept-unverified-chain"], {
        EVIDENCE_SIGNING_KEY: operator.privateKey,
      });
      expect(written.code).toBe(0);
      expect(written.stderr).toContain(notice);
      expect((await cli(["evidence", "verify", out, "--public-key", path.join(dir, "operator.pub")])).code).toBe(1);

      // The API: 409 in words, then the pack only when asked, its name and a header saying it cannot vouch.
      const query = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
      const apiRefused = await request(stack.service.url)
        .get(`/admin/api/evidence?${query}`)
        .set("Authorization", `Bearer ${ADMIN_TOKEN}`);
      expect(apiRefused.status).toBe(409);
      expect(apiRefused.body.message).toContain(notice);
      expect(apiRefused.body.message).toContain("acceptUnverifiedChain=true");
      const apiPack = await fetch(`${stack.service.url}/admin/api/evidence?${query}&acceptUnverifiedChain=true`, {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(apiPack.status).toBe(200);
      expect(apiPack.headers.get("content-disposition")).toMatch(/filename="evidence-.*-chain-not-verified\.tar"/);
      expect(apiPack.headers.get("evidence-chain")).toContain(notice);
      const { createPublicKey } = await import("node:crypto");
      const apiVerdict = await verifyEvidencePack(
        Readable.from([Buffer.from(await apiPack.arrayBuffer())]),
        createPublicKey(operator.publicKey),
      );
      expect(apiVerdict.ok).toBe(false);
      expect(apiVerdict.problems).toEqual([expect.stringContaining(broken)]);

      // The page: a page in words with a button to download it anyway, then the marked pack.
      const agent = request.agent(stack.service.url);
      expect((await signInLocally(agent)).status).toBe(303);
      const day = (iso: string) => iso.slice(0, 10);
      const csrf = csrfFrom((await agent.get("/admin")).text);
      const form = { _csrf: csrf, from: day(from), to: day(to) };
      const pageRefused = await agent.post("/admin/access/evidence").type("form").send(form);
      expect(pageRefused.status).toBe(409);
      expect(pageRefused.text).toContain(notice);
      expect(pageRefused.text).toContain("Download the pack anyway");
      expect(pageRefused.text).toContain('name="acceptUnverifiedChain" value="true"');
      // The page's button posts its form again, with the page's CSRF token, asking for the pack anyway.
      expect(pageRefused.text).toMatch(
        /<form method="post" action="\/admin\/access\/evidence">\s*<input type="hidden" name="_csrf"/,
      );
      const pagePack = await agent
        .post("/admin/access/evidence")
        .type("form")
        .send({ ...form, _csrf: csrfFrom(pageRefused.text), acceptUnverifiedChain: "true" })
        .buffer(true)
        .parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => done(null, Buffer.concat(chunks)));
        });
      expect(pagePack.status).toBe(200);
      expect(pagePack.headers["content-disposition"]).toMatch(/-chain-not-verified\.tar"$/);
    } finally {
      await db.query(`UPDATE reconcile_log SET outcome = $2 WHERE id = $1`, [target!.id, target!.outcome]);
    }
    expect((await cli(["audit", "verify"])).code).toBe(0);
  });
});

import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { swapMappingState } from "../../src/db/mappingStateRepository.js";
import { parseMapping } from "../../src/mapping/file.js";
import { MappingStore } from "../../src/mapping/store.js";
import { MappingMarks1763700002100 } from "../../migrations/1763700002100-mapping-marks.js";
import { queueGeneration } from "../support/queue.js";
import { idp, startStack, TEST_MAPPING, type Stack } from "../support/stack.js";

/**
 * Putting a mapping in force marks the users its change affects (MappingStore.putInForce), and
 * nothing may report that done before they are: reloads on one replica run one after the other
 * (the file watcher, SIGHUP and a caller can ask at once), and a change recorded in force by a
 * replica that stopped before marking is marked by the next start or reload.
 */
describe("mapping changes mark their users", () => {
  let stack: Stack;
  const withPermission = (permission: string) =>
    TEST_MAPPING.replace("permissions: [export_user_data]", `permissions: [export_user_data, ${permission}]`);

  beforeAll(async () => {
    // No workers: the marks stay in the queue to be read.
    stack = await startStack({ workers: false });
    const analysts = await idp(stack).createGroup("Analysts-EU");
    const analyst = await idp(stack).createUser("analyst@example.com");
    await idp(stack).patch(`/Groups/${analysts}`, [{ op: "add", path: "members", value: [{ value: analyst }] }]);
  });
  afterAll(async () => stack?.close());

  // The analyst is queued already (the IdP's writes); a mark raises the row's generation.
  const generation = () => queueGeneration(stack.database.db, "analyst@example.com");
  const markedHash = async () =>
    (await stack.database.db.query<{ marked_hash: string | null }>(`SELECT marked_hash FROM mapping_state`))[0]!
      .marked_hash;

  it("each reload resolves after the affected users are marked, also the one that found the change already in force", async () => {
    const before = await generation();
    await writeFile(stack.mappingFile, withPermission("basic_access"));
    const reloads = [1, 2, 3].map(() =>
      stack.service.mappings
        .reload(stack.service.db)
        .then(async (result) => ({ result, generation: await generation() })),
    );
    const answers = await Promise.all(reloads);
    expect(answers.map((a) => a.result)).toEqual([
      { ok: true, changed: true },
      { ok: true, changed: false },
      { ok: true, changed: false },
    ]);
    for (const answer of answers) expect(answer.generation).toBeGreaterThan(before);
    expect(await markedHash()).toBe(stack.service.mappings.current().hash);
  });

  it("a change recorded in force by a replica that stopped before marking is marked at the next reload, and at a start", async () => {
    for (const [permission, putInForce] of [
      ["view_usage_data", () => stack.service.mappings.reload(stack.service.db)],
      // What a start does (src/service.ts): the file loaded, then put in force.
      ["manage_apps", async () => (await MappingStore.load(stack.mappingFile)).putInForce(stack.service.db)],
    ] as const) {
      const text = withPermission(permission);
      const hash = parseMapping(text, "crashed replica").hash;
      // The stopped replica's first step: the mapping recorded in force, no user marked.
      expect(await swapMappingState(stack.database.db, hash, text)).toMatchObject({ changed: true });
      expect(await markedHash()).toBeNull();
      const before = await generation();
      await writeFile(stack.mappingFile, text);
      await putInForce();
      expect(await generation()).toBeGreaterThan(before);
      expect(await markedHash()).toBe(hash);
      // Marked through: the next start marks no one.
      const after = await generation();
      await (await MappingStore.load(stack.mappingFile)).putInForce(stack.service.db);
      expect(await generation()).toBe(after);
    }
  });

  it("the migration counts the mapping in force before it as marked, so an upgrade marks no one", async () => {
    const migration = new MappingMarks1763700002100();
    type Runner = Parameters<MappingMarks1763700002100["up"]>[0];
    const runner = { query: (sql: string) => stack.database.db.query(sql) } as unknown as Runner;
    const [{ hash }] = await stack.database.db.query<{ hash: string }>(`SELECT hash FROM mapping_state`);
    await migration.down(runner); // the table as the release before had it, its mapping in force
    await migration.up(runner);
    expect(await markedHash()).toBe(hash);
    const after = await generation();
    await (await MappingStore.load(stack.mappingFile)).putInForce(stack.service.db);
    expect(await generation()).toBe(after);
  });
});

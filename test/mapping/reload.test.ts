import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { swapMappingState } from "../../src/db/mapping/stateRepository.js";
import { parseMapping } from "../../src/mapping/file.js";
import { MappingStore } from "../../src/mapping/store.js";
import { MappingMarks1763700002100 } from "../../migrations/1763700002100-mapping-marks.js";
import { captureLogs } from "../support/logCapture.js";
import { queueGeneration } from "../support/queue.js";
import { idp, startStack, TEST_MAPPING, writeMappingFile, type Stack } from "../support/stack.js";

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

  it("reloads at once run one after the other: each resolves after the users are marked, and only the first marks them", async () => {
    const before = await generation();
    await writeFile(stack.mappingFile, withPermission("basic_access"));
    let answers: { result: Awaited<ReturnType<MappingStore["reload"]>>; generation: number }[] = [];
    const logged = await captureLogs(async () => {
      answers = await Promise.all(
        [1, 2, 3].map(() =>
          stack.service.mappings
            .reload(stack.service.db)
            .then(async (result) => ({ result, generation: await generation() })),
        ),
      );
    });
    expect(answers.every((a) => a.result.ok)).toBe(true);
    for (const answer of answers) expect(answer.generation).toBeGreaterThan(before);
    // One marking: by one of these, or by the file watcher's reload when its poll came first. Run at
    // once, the later ones would each find the change unmarked and mark its users again.
    expect(logged.filter((r) => r.message === "mapping put in force")).toHaveLength(1);
    expect(await markedHash()).toBe(stack.service.mappings.current().hash);
  });

  /** The stopped replica's first step: `text` recorded in force, no user marked. */
  async function swappedByAStoppedReplica(text: string): Promise<string> {
    const hash = parseMapping(text, "stopped replica").hash;
    expect(await swapMappingState(stack.database.db, hash, text)).toMatchObject({ changed: true });
    expect(await markedHash()).toBeNull();
    return hash;
  }

  /** Marked through: a start (the file loaded, then put in force, as src/service.ts does) marks no one. */
  async function startMarksNoOne(file: string): Promise<void> {
    const after = await generation();
    await (await MappingStore.load(file)).putInForce(stack.service.db);
    expect(await generation()).toBe(after);
  }

  it("a change recorded in force by a replica that stopped before marking is marked at the next reload", async () => {
    const text = withPermission("view_usage_data");
    const hash = await swappedByAStoppedReplica(text);
    const before = await generation();
    await writeFile(stack.mappingFile, text);
    // The service's reload (its file watcher's, if that one came first: they run one after the other).
    await stack.service.mappings.reload(stack.service.db);
    expect(await generation()).toBeGreaterThan(before);
    expect(await markedHash()).toBe(hash);
    await startMarksNoOne(stack.mappingFile);
  });

  it("and at the next start", async () => {
    const text = withPermission("manage_apps");
    const hash = await swappedByAStoppedReplica(text);
    const before = await generation();
    // Another replica's file: the service's own, which it watches, stays as it is.
    const file = await writeMappingFile(text);
    await (await MappingStore.load(file)).putInForce(stack.service.db);
    expect(await generation()).toBeGreaterThan(before);
    expect(await markedHash()).toBe(hash);
    await startMarksNoOne(file);
  });

  it("the migration counts the mapping in force before it as marked, so an upgrade marks no one", async () => {
    const migration = new MappingMarks1763700002100();
    type Runner = Parameters<MappingMarks1763700002100["up"]>[0];
    const runner = { query: (sql: string) => stack.database.db.query(sql) } as unknown as Runner;
    const [{ hash, text }] = await stack.database.db.query<{ hash: string; text: string }>(
      `SELECT hash, source_text AS text FROM mapping_state`,
    );
    await migration.down(runner); // the table as the release before had it, its mapping in force
    await migration.up(runner);
    expect(await markedHash()).toBe(hash);
    await startMarksNoOne(await writeMappingFile(text));
  });
});

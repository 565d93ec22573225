import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idp, startStack, TEST_MAPPING, type Stack } from "../support/stack.js";

/**
 * Reloads on one replica run one after the other (MappingStore.reload): the file watcher, SIGHUP
 * and a caller can ask at once, and none may report back before the users the change affects are
 * marked.
 */
describe("mapping reloads at once", () => {
  let stack: Stack;

  beforeAll(async () => {
    // No workers: the marks stay in the queue to be read.
    stack = await startStack({ workers: false });
    const analysts = await idp(stack).createGroup("Analysts-EU");
    const analyst = await idp(stack).createUser("analyst@example.com");
    await idp(stack).patch(`/Groups/${analysts}`, [{ op: "add", path: "members", value: [{ value: analyst }] }]);
  });
  afterAll(async () => stack?.close());

  it("each reload resolves after the affected users are marked, also the one that found the change already in force", async () => {
    // The analyst is queued already (the IdP's writes, which outrank a mapping mark as its trigger);
    // a mark raises its generation.
    const generation = async (): Promise<number> =>
      Number(
        (
          await stack.database.db.query<{ generation: string }>(
            `SELECT q.generation FROM reconcile_queue q JOIN idp_users u ON u.id = q.user_id WHERE u.user_name = 'analyst@example.com'`,
          )
        )[0]!.generation,
      );
    const before = await generation();
    await writeFile(
      stack.mappingFile,
      TEST_MAPPING.replace("permissions: [export_user_data]", "permissions: [export_user_data, basic_access]"),
    );
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
  });
});

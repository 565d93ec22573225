import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseMapping } from "../../src/mapping/file.js";
import { startCutProxy, type CutProxy } from "./cutProxy.js";
import { queueGeneration } from "../support/queue.js";
import { idp, startStack, TEST_MAPPING, type Stack } from "../support/stack.js";
import { eventually } from "../support/wait.js";

/**
 * The database lost while a running replica puts a changed mapping in force: a proxy between the
 * connector and PostgreSQL closes the connection right after the mapping is recorded in force (its
 * transaction committed) and before any user is marked. The file watcher's reload fails; its retry
 * must find the change unmarked and mark the users it affects, without a restart or a touch of the
 * file (MappingStore.watch, putInForce).
 */

/** Text of swapMappingState's row lock (src/db/mapping/stateRepository.ts) and of nothing else. */
const SWAP = "FROM mapping_state WHERE id = 1 FOR UPDATE";

describe("a mapping change whose marking loses the database", () => {
  let stack: Stack;
  let proxy: CutProxy;

  beforeAll(async () => {
    stack = await startStack({
      workers: false, // the marks stay in the queue to be read
      route: async (url) => {
        proxy = await startCutProxy(url, SWAP);
        return proxy.url;
      },
    });
    const analysts = await idp(stack).createGroup("Analysts-EU");
    const analyst = await idp(stack).createUser("analyst@example.com");
    await idp(stack).patch(`/Groups/${analysts}`, [{ op: "add", path: "members", value: [{ value: analyst }] }]);
  });
  afterAll(async () => {
    await stack?.close();
    await proxy?.close();
  });

  it("marks the affected users once the database answers again, by the watcher's retry", async () => {
    const generation = () => queueGeneration(stack.database.db, "analyst@example.com");
    const before = await generation();
    const text = TEST_MAPPING.replace(
      "permissions: [export_user_data]",
      "permissions: [export_user_data, basic_access]",
    );
    proxy.arm();
    await writeFile(stack.mappingFile, text);
    await eventually("the swap's connection cut after its commit", async () => proxy.cuts === 1);
    const [state] = await stack.database.db.query<{ hash: string; marked_hash: string | null }>(
      `SELECT hash, marked_hash FROM mapping_state`,
    );
    const hash = parseMapping(text, "new").hash;
    expect(state).toEqual({ hash, marked_hash: null });
    await eventually("the analyst marked by the retry", async () => (await generation()) > before, {
      timeoutMs: 30_000,
    });
    await eventually("the marks recorded as written", async () => {
      const [now] = await stack.database.db.query<{ marked_hash: string | null }>(
        `SELECT marked_hash FROM mapping_state`,
      );
      return now!.marked_hash === hash;
    });
    expect(proxy.cuts).toBe(1);
  }, 60_000);
});

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MappingError } from "../../src/config/mapping.js";
import { MappingStore, type MappingChange } from "../../src/config/mappingStore.js";

const base = "department: { default: engineering }\nrules:\n  - group: Admins\n    companyPermissions: [admin]\n";
let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function storeWith(text: string): Promise<{ store: MappingStore; file: string; changes: MappingChange[] }> {
  dir = await mkdtemp(path.join(os.tmpdir(), "mapping-store-"));
  const file = path.join(dir, "mapping.yaml");
  await writeFile(file, text);
  const store = await MappingStore.load(file);
  const changes: MappingChange[] = [];
  store.onChange((c) => void changes.push(c));
  return { store, file, changes };
}

describe("MappingStore", () => {
  it("a reload that only changes comments or layout is not a change", async () => {
    const { store, file, changes } = await storeWith(base);
    await writeFile(file, `# a comment\n${base.replace("[admin]", "\n      - admin")}`);
    expect(await store.reload()).toMatchObject({ changed: false });
    expect(changes).toEqual([]);
  });

  it("a reload that changes meaning notifies listeners with before and after", async () => {
    const { store, file, changes } = await storeWith(base);
    const before = store.current();
    await writeFile(file, base.replace("[admin]", "[admin, manage_company_settings]"));
    expect(await store.reload()).toMatchObject({ changed: true });
    expect(changes).toHaveLength(1);
    expect(changes[0]!.before).toBe(before);
    expect(store.current().rules[0]!.companyPermissions).toEqual(["admin", "manage_company_settings"]);
  });

  it("an invalid reload throws the problems and keeps the mapping in force", async () => {
    const { store, file, changes } = await storeWith(base);
    const before = store.current();
    await writeFile(file, base.replace("companyPermissions", "companyPermission"));
    await expect(store.reload()).rejects.toBeInstanceOf(MappingError);
    expect(store.current()).toBe(before);
    expect(changes).toEqual([]);
  });
});

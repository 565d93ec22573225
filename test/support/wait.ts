import { vi } from "vitest";

/**
 * The one polling wait of the tests: vi.waitFor until `probe` gives a truthy value, which it
 * returns (`true` for a plain check). After `timeoutMs` it fails naming `what`.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await probe();
      if (!value) throw new Error(`timed out waiting for ${what}`);
      return value;
    },
    { timeout: options.timeoutMs ?? 30_000, interval: options.intervalMs ?? 100 },
  );
}

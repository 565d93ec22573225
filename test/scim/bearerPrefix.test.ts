import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDP_TOKEN, startStack, type Stack } from "../support/stack.js";

/**
 * An IdP admin who pastes "Bearer <token>" into a token field the IdP prefixes itself sends
 * `Authorization: Bearer Bearer <token>`. The answer names that, instead of asking for a token.
 */
describe("SCIM authentication with the scheme pasted into the token field", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workers: false });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("is refused (401), and the answer names the doubled Bearer prefix", async () => {
    const res = await fetch(`${stack.service.url}/scim/v2/Users?count=1`, {
      headers: { authorization: `Bearer Bearer ${IDP_TOKEN}` },
    });
    expect(res.status).toBe(401);
    const body = (await res.json()) as { detail: string };
    expect(body.detail).toMatch(/"Bearer" twice/);
    expect(body.detail).not.toContain(IDP_TOKEN);
  });
});

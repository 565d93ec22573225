import { describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { listenHttp } from "../../src/service/http.js";
import { captureLogs } from "../support/logCapture.js";

/**
 * The process log's "listening" line names the address bound, as the banner does: with HOST=0.0.0.0
 * it said only `url: http://127.0.0.1:8081` (the URL to call from this machine), which read as
 * loopback only while every interface listened (issue 47, item 7).
 */
describe("the listening line", () => {
  it("names the address bound beside the URL to call", async () => {
    const env = loadEnv({ NODE_ENV: "test", HOST: "0.0.0.0", PORT: "0" });
    let port = "";
    const records = await captureLogs(async () => {
      const listener = await listenHttp(env);
      port = new URL(listener.url).port;
      await listener.close(0);
    });
    const line = records.find((record) => record.message === "listening");
    expect(line).toMatchObject({ address: `0.0.0.0:${port}`, url: `http://127.0.0.1:${port}` });
  });
});

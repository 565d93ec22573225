import http from "node:http";

/** A keep-alive HTTP client for the benchmarks: up to `maxSockets` connections to one server. */
export function keepAliveClient(baseUrl: string, maxSockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const target = new URL(baseUrl);
  const call = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request({ host: target.hostname, port: target.port, method, path, headers, agent }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on("error", reject);
      req.end(body);
    });
  return { call, close: () => agent.destroy() };
}

// A process with the connector's process policy (src/processGuards.ts) holding each kind of
// database connection the connector holds, for test/faults/connection-loss.test.ts:
// `node --import tsx test/faults/connectionLossProcess.ts <poolUrl> <leaseUrl> <poolName> <marker>`,
// driven over IPC.
// Each command checks a connection out and says which backend holds it; the test terminates that
// backend and says "continue"; the command reports how its statements ended. An 'error' event that
// no listener hears is an uncaught exception outside any request: the guards end the process.
import { openDatabase } from "../../src/db/dataSource.js";
import { WorkerLease } from "../../src/db/reconcile/workerLease.js";
import { installProcessGuards } from "../../src/processGuards.js";

export type Command = { do: "serve" | "transaction" | "raw" | "lease" | "handover" | "continue" };
export type Report =
  { ready: true } | { checkedOut: true } | { served: boolean; leaseId: number } | { outcome: string[] };

const send = (report: Report) => process.send!(report);
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (error: Error & { code?: string }) => `failed ${error.code ?? ""} ${error.message}`.trim(),
  );

installProcessGuards();
const [poolUrl, leaseUrl, poolName, handoverMarker] = process.argv.slice(2);
// A pool of one: a statement waiting for it is handed the client the moment the holder releases it.
const db = await openDatabase({ url: poolUrl!, poolSize: 1, applicationName: poolName! });
const lease = new WorkerLease(leaseUrl!, ["reconcile_queue"]);
await lease.start();

let resume: (() => void) | undefined;
const resumed = () => new Promise<void>((resolve) => (resume = resolve));

const commands: Record<Exclude<Command["do"], "continue">, () => Promise<void>> = {
  async serve() {
    const served = await db.query<{ one: number }>("SELECT 1 AS one").then(
      (rows) => rows[0]?.one === 1,
      () => false,
    );
    await lease.ensure();
    send({ served, leaseId: lease.id });
  },
  // Idle in a transaction (TypeORM's query runner) when the backend is terminated.
  async transaction() {
    const result = await outcome(
      db.transaction(async (tx) => {
        await tx.query("SELECT 1");
        send({ checkedOut: true });
        await resumed();
        await tx.query("SELECT 2");
      }),
    );
    send({ outcome: [result] });
  },
  // A raw pooled statement (Database.prepared) running when the backend is terminated.
  async raw() {
    const running = outcome(db.prepared("connection_loss_sleep", "SELECT pg_sleep(30)", []));
    send({ checkedOut: true });
    send({ outcome: [await running] });
  },
  // The worker lease's own connection (advisory lock, LISTEN): the test terminates it; `serve` reconnects.
  async lease() {
    // The lease wakes its listeners when it loses its connection.
    const woken = new Promise<void>((resolve) => {
      const off = lease.onNotify(() => (off(), resolve()));
    });
    send({ checkedOut: true });
    await woken;
    send({ outcome: [lease.id === 0 ? "lost" : "held"] });
  },
  // A raw statement's client handed, as it is released, to a transaction waiting for the pool,
  // in the same read as the server's goodbye (test/faults/holdingProxy.ts).
  async handover() {
    const raw = outcome(db.prepared("connection_loss_handover", `SELECT 1 AS one ${handoverMarker}`, []));
    const waiting = outcome(db.transaction((tx) => tx.query("SELECT 2 AS two")));
    send({ checkedOut: true });
    send({ outcome: [await raw, await waiting] });
  },
};

process.on("message", (command: Command) => {
  if (command.do === "continue") return resume?.();
  void commands[command.do]();
});
send({ ready: true });

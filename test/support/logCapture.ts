import Transport from "winston-transport";
import { resetLogger, setLogLevel, setLogTransport } from "../../src/logging/logger.js";

/** The process log's records, as the service writes them. */
class CaptureTransport extends Transport {
  readonly records: Record<string, unknown>[] = [];
  override log(info: Record<string, unknown>, callback: () => void): void {
    this.records.push(info);
    callback();
  }
}

/** The records the process logs at info and above while `work` runs (the logger reset after). */
export async function captureLogs(work: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const capture = new CaptureTransport();
  setLogTransport(capture);
  setLogLevel("info");
  try {
    await work();
  } finally {
    resetLogger();
  }
  return capture.records;
}

import { readFileSync } from "node:fs";

/** CPU time (user + system) of these processes from /proc, in ms; undefined where /proc is unavailable. */
export function cpuMsOf(pids: number[]): number | undefined {
  try {
    let ticks = 0;
    for (const pid of pids) {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return ticks * 10; // USER_HZ is 100 on Linux: a tick is 10 ms
  } catch {
    return undefined;
  }
}

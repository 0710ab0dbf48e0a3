/**
 * A server's memory and CPU read from outside, for bench/oauth.ts: its resident set size and CPU
 * time from /proc (or `ps` elsewhere), and, through the inspector it was started with (`--inspect=127.0.0.1:0` in
 * NODE_OPTIONS, whose address it prints on stderr), a full garbage collection before a reading, so
 * what is counted is what the server keeps, not garbage a collection has not reached yet. A heap
 * snapshot can be written too (BENCH_HEAP_SNAPSHOT), to see where the memory goes.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

/** Resident set size of a process, in bytes. */
export function rssOf(pid: number): number {
  const status = `/proc/${pid}/status`;
  if (existsSync(status)) return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(status, "utf8"))?.[1]) * 1024;
  return (
    Number(
      execFileSync("ps", ["-o", "rss=", "-p", String(pid)])
        .toString()
        .trim(),
    ) * 1024
  );
}

/**
 * CPU time a process has used (user and system), in ms, in 10 ms ticks: over a thousand calls, a
 * cost per call that the machine's other load does not change, unlike latency.
 */
export function cpuMsOf(pid: number): number {
  const stat = `/proc/${pid}/stat`;
  if (existsSync(stat)) {
    const fields = (readFileSync(stat, "utf8").split(") ")[1] ?? "").split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  }
  const [m = "0", s = "0"] = execFileSync("ps", ["-o", "time=", "-p", String(pid)])
    .toString()
    .trim()
    .split(":")
    .slice(-2);
  return (Number(m) * 60 + Number(s)) * 1000;
}

export interface Inspector {
  /** Two full collections (the second frees what the first's finalizers let go). */
  collect(): Promise<void>;
  /** Bytes of the JavaScript heap in use. */
  heapUsed(): Promise<number>;
  /** Writes a heap snapshot to `path` (open it in Chrome's DevTools, Memory tab). */
  snapshot(path: string): Promise<void>;
  close(): void;
}

/** Connects to the inspector whose `ws://` address `stderr` printed (Node's own WebSocket client). */
export async function inspect(stderr: string): Promise<Inspector> {
  const address = /ws:\/\/\S+/.exec(stderr)?.[0];
  if (address === undefined) throw new Error("the server printed no inspector address");
  const ws = new WebSocket(address);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let next = 0;
  const waiting = new Map<number, (result: Record<string, unknown>) => void>();
  const chunks: string[] = [];
  ws.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      method?: string;
      params?: { chunk?: string };
      result?: Record<string, unknown>;
    };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result ?? {});
    else if (message.method === "HeapProfiler.addHeapSnapshotChunk") chunks.push(message.params?.chunk ?? "");
  };
  const send = (method: string, params: object = {}) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = ++next;
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send("HeapProfiler.enable");
  return {
    async collect() {
      await send("HeapProfiler.collectGarbage");
      await send("HeapProfiler.collectGarbage");
    },
    async heapUsed() {
      return Number((await send("Runtime.getHeapUsage")).usedSize);
    },
    async snapshot(path) {
      chunks.length = 0;
      await send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
      writeFileSync(path, chunks.join(""));
    },
    close: () => ws.close(),
  };
}

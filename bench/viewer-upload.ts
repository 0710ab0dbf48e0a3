/**
 * `npm run bench`, part (j): a 30 MiB (31,457,280-byte) file uploaded through the media viewer's
 * chunks (the app-only tool viewer_upload: an upload opened, then 60 base64 chunks of 512 KiB, the
 * file sent to the service after the last) against the same file by `upload_asset {path}`, both
 * through the built CLI over Streamable HTTP (the viewer's path from a remote host) to the sandbox in
 * its own process, interleaved in one run: on bare loopback, and through a 100 Mbit/s uplink. The
 * server's resident memory is sampled from /proc every 5 ms during each upload, from its level just
 * before. Goals: the chunked upload within 1.5x the direct one's time (median), and the server's
 * RSS rise under 16 MiB (worst round).
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { APP_MIME_TYPE, APPS_EXTENSION, startHttpCli } from "../test/helpers/cli.js";
import { inParallel } from "../test/helpers/sign-in-direct.js";
import { delayProxy } from "./delay-proxy.js";
import { writePngFile } from "./media-files.js";

const SIZE = 31_457_280;
const CHUNK = 512 * 1024;
/** Chunks on their way at once after chunk 0, as the view sends them (src/viewer/app/upload-send.ts). */
const IN_FLIGHT = Number(process.env.BENCH_UPLOAD_IN_FLIGHT ?? 3);
const ROUNDS = Number(process.env.BENCH_UPLOAD_ROUNDS ?? 3);
const RATIO_GOAL = 1.5;
const RSS_GOAL_MIB = 16;
const MiB = 1024 * 1024;
/** 100 Mbit/s, a home or office uplink. */
const UPLINK_BYTES_PER_S = 12_500_000;
const mib = (n: number) => (n / MiB).toFixed(1);

/** The server's resident memory, from /proc (Linux). */
const rssOf = (pid: number): number => {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(line?.[1] ?? 0) * 1024;
};

/** The server's CPU time so far (user + system), from /proc (Linux; clock ticks of 10 ms). */
const cpuOf = (pid: number): number => {
  const fields = (readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1] ?? "").split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

interface Measured {
  ms: number;
  rise: number;
  /** The server's CPU time during the upload (ms): robust to a loaded machine, unlike `ms`. */
  cpu: number;
}

/** Runs `upload` while sampling the server's RSS; the time and the peak rise over the level before. */
async function measure(pid: number, upload: () => Promise<void>): Promise<Measured> {
  await new Promise((r) => setTimeout(r, 200));
  const before = rssOf(pid);
  const cpu = cpuOf(pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
  }, 5);
  const started = performance.now();
  await upload();
  const ms = performance.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, rssOf(pid));
  return { ms, rise: peak - before, cpu: cpuOf(pid) - cpu };
}

function check(r: CallToolResult, what: string): Record<string, unknown> {
  if (r.isError) throw new Error(`${what} failed: ${JSON.stringify(r.content)}`);
  return r.structuredContent as Record<string, unknown>;
}

/**
 * The file through the viewer's chunks, read from disk a chunk at a time as a view reads a File,
 * in the view's order (src/viewer/app/upload-send.ts): chunk 0, then IN_FLIGHT at a time
 * (BENCH_UPLOAD_IN_FLIGHT; 1 sends them one by one, as the view did before), then the last alone.
 */
async function chunked(client: Client, path: string): Promise<void> {
  const call = async (args: Record<string, unknown>) =>
    check(
      (await client.callTool({ name: "viewer_upload", arguments: args })) as CallToolResult,
      "viewer_upload",
    );
  const { upload } = await call({ kind: "asset", size: SIZE, name: "bench.png" });
  const count = Math.ceil(SIZE / CHUNK);
  const fd = openSync(path, "r");
  const send = (seq: number) => {
    const buffer = Buffer.alloc(CHUNK);
    const n = readSync(fd, buffer, 0, CHUNK, seq * CHUNK);
    return call({ upload, seq, data: buffer.subarray(0, n).toString("base64") });
  };
  try {
    await send(0);
    const middle = Array.from({ length: Math.max(0, count - 2) }, (_, i) => i + 1);
    await inParallel(middle, IN_FLIGHT, send);
    const last = await send(count - 1);
    if (last.state !== "finished") throw new Error(`the chunked upload ended ${String(last.state)}`);
  } finally {
    closeSync(fd);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

interface Compared {
  times: { direct: number[]; chunked: number[] };
  rises: { direct: number[]; chunked: number[] };
  cpus: { direct: number[]; chunked: number[] };
}

/** ROUNDS of each upload, interleaved, through one server whose service is at `env`'s base URL. */
async function compare(
  env: Record<string, string>,
  dir: string,
  file: string,
  rounds: number,
): Promise<Compared> {
  // BENCH_SERVER_NODE_OPTIONS reaches the server alone (e.g. `--cpu-prof --cpu-prof-dir=DIR`).
  const options = process.env.BENCH_SERVER_NODE_OPTIONS;
  const server = await startHttpCli([], {
    ...env,
    GENERATION_FILES: dir,
    ...(options === undefined ? {} : { NODE_OPTIONS: options }),
  });
  const pid = server.child.pid as number;
  const client = new Client(
    { name: "bench-viewer-host", version: "1.0.0" },
    { capabilities: { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  const direct = async (path: string) => {
    check(
      (await client.callTool({ name: "upload_asset", arguments: { path } })) as CallToolResult,
      "upload_asset",
    );
  };
  try {
    // Warm both paths (file-type, the upload code, the HTTP stack) so no round pays a one-time cost.
    await direct("warm.png");
    await chunked(client, file);
    const out: Compared = {
      times: { direct: [], chunked: [] },
      rises: { direct: [], chunked: [] },
      cpus: { direct: [], chunked: [] },
    };
    for (let i = 0; i < rounds; i++) {
      const d = await measure(pid, () => direct(file));
      const c = await measure(pid, () => chunked(client, file));
      out.times.direct.push(d.ms);
      out.times.chunked.push(c.ms);
      out.rises.direct.push(d.rise);
      out.rises.chunked.push(c.rise);
      out.cpus.direct.push(d.cpu);
      out.cpus.chunked.push(c.cpu);
    }
    return out;
  } finally {
    await client.close();
    await server.stop();
  }
}

function report(label: string, r: Compared, print: (line: string) => void): void {
  const ratio = median(r.times.chunked) / median(r.times.direct);
  const all = (xs: number[]) => xs.map((t) => t.toFixed(0)).join(", ");
  print(
    `    ${label}: by path median ${median(r.times.direct).toFixed(0)} ms (${all(r.times.direct)}); chunked median ${median(r.times.chunked).toFixed(0)} ms (${all(r.times.chunked)})`,
  );
  print(
    `      ratio ${ratio.toFixed(2)} (goal <= ${RATIO_GOAL}: ${ratio <= RATIO_GOAL ? "met" : "NOT met"}); server CPU median ${median(r.cpus.direct)} ms by path, ${median(r.cpus.chunked)} ms chunked; load average ${loadavg()[0]?.toFixed(1)}`,
  );
}

/**
 * (j), printed with `print`: on bare loopback to the sandbox (no cost of the link, so the ratio is
 * the chunks' whole overhead), and through a 100 Mbit/s uplink (bench/delay-proxy.ts), as a server
 * on the user's own machine reaches the service. `env` points the server at the sandbox.
 */
export async function viewerUploadCost(
  env: Record<string, string>,
  dir: string,
  print: (line: string) => void,
): Promise<void> {
  const file = join(dir, "bench-30mib.png");
  writePngFile(file, SIZE);
  writePngFile(join(dir, "warm.png"), 64 * 1024);
  print(
    `(j) a ${SIZE}-byte file through the viewer's chunks (open + ${SIZE / CHUNK} chunks of 512 KiB, base64) vs upload_asset by path, over HTTP, interleaved`,
  );
  const loopback = await compare(env, dir, file, ROUNDS);
  report(`loopback, ${ROUNDS} rounds`, loopback, print);
  const uplink = await delayProxy(env.GENERATION_BASE_URL as string, 0, {
    bytesPerSecond: UPLINK_BYTES_PER_S,
  });
  try {
    report(
      "a 100 Mbit/s uplink to the service, 2 rounds",
      await compare({ ...env, GENERATION_BASE_URL: uplink.url }, dir, file, 2),
      print,
    );
  } finally {
    await uplink.close();
  }
  const worst = Math.max(...loopback.rises.chunked);
  print(
    `    server RSS rise (loopback): chunked worst ${mib(worst)} MiB (${loopback.rises.chunked.map(mib).join(", ")}), by path worst ${mib(Math.max(...loopback.rises.direct))} MiB (goal < ${RSS_GOAL_MIB} MiB: ${worst < RSS_GOAL_MIB * MiB ? "met" : "NOT met"})`,
  );
}

/**
 * Large request bodies parsed on a thread of their own. A 16 MiB body takes 25 to 65 ms to turn
 * into text and parse; on the event loop every other request (a user's small call, a new
 * connection) waits that long, and one key's bodies, six at once, held the users' p99 at many
 * times its quiet figure under issue 30's hostile mix (docs/security.md). Here the loop only hands
 * the bytes over (moved, not copied, when the body owns its memory) and takes the parsed value back
 * (V8's structured clone: a 16 MiB string is copied at memory speed, a few ms). Bodies are parsed
 * one after another on the one thread, so a flood of them queues there, not on the loop.
 */
import type { Worker } from "node:worker_threads";
import { depthExceeds } from "./http-json-depth.js";

/** What the thread answers: the value, or why there is none. */
export type ThreadParse = { ok: true; value: unknown } | { ok: false; why: "json" | "depth" };

interface Pending {
  resolve: (parsed: ThreadParse) => void;
  reject: (error: Error) => void;
}

// Plain CommonJS evaluated by the thread, so the bundle needs no file of its own for it;
// depthExceeds is self-contained (it names nothing outside itself) and is sent as its source.
const SOURCE = `
const { parentPort } = require("node:worker_threads");
const { isAscii } = require("node:buffer");
const depthExceeds = ${depthExceeds.toString()};
parentPort.on("message", ({ id, bytes, maxDepth }) => {
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let value;
  try {
    value = JSON.parse(isAscii(body) ? body.toString("latin1") : body.toString("utf8"));
  } catch {
    parentPort.postMessage({ id, ok: false, why: "json" });
    return;
  }
  if (depthExceeds(value, maxDepth)) parentPort.postMessage({ id, ok: false, why: "depth" });
  else parentPort.postMessage({ id, ok: true, value });
});
`;

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();

function thread(): Worker {
  if (worker !== undefined) return worker;
  const { Worker } = process.getBuiltinModule("node:worker_threads");
  const w = new Worker(SOURCE, { eval: true, name: "generation-mcp body parser" });
  w.unref(); // it never keeps the process alive: the server (or the test) does
  w.on("message", (m: { id: number } & ThreadParse) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    p?.resolve(m.ok ? { ok: true, value: m.value } : { ok: false, why: m.why });
  });
  // A thread that failed (out of memory on a body) fails what it held; the next body starts another.
  const failed = (error: Error) => {
    if (worker === w) worker = undefined;
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };
  w.on("error", failed);
  w.on("exit", (code) => failed(new Error(`the body parser's thread exited (${code})`)));
  worker = w;
  return w;
}

/**
 * `body` parsed as JSON on the parser's thread, refused past `maxDepth` levels of nesting. The
 * body's memory is moved to the thread when it owns all of it (it is unusable here afterwards).
 */
export function parseOnThread(body: Buffer, maxDepth: number): Promise<ThreadParse> {
  const id = nextId++;
  const owns = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
  const bytes = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    const transfer = owns && body.buffer instanceof ArrayBuffer ? [body.buffer] : [];
    thread().postMessage({ id, bytes, maxDepth }, transfer);
  });
}

/**
 * Reading a request's body: once, bounded in size (MAX_BODY_BYTES) and nesting (MAX_JSON_DEPTH),
 * its bytes held within the memory budget of its key and of the process, and, for a body that
 * declares no length, counted against its key's rate as it arrives (http-admission.ts).
 */
import { isAscii } from "node:buffer";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type LimitLog, type Shares, sourceOfKey } from "../shared/fair-shares.js";
import { byteSize } from "../shared/wording.js";
import { parseOnThread, type ThreadParse } from "./http-body-thread.js";
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from "./http-guard.js";
import { depthExceeds } from "./http-json-depth.js";

export type BodyRead =
  | { ok: true; value: unknown }
  | { ok: false; status: number; message: string; headers?: Record<string, string> };

/**
 * Bytes of a body about to be held in memory: undefined when the budget takes them, else the
 * refusal's message (http-server.ts keeps the budget, total and per key).
 */
export type BodyBudget = (bytes: number) => string | undefined;
/** What a body refused for the memory budget is told to wait. */
export const BODY_RETRY_S = 5;

/**
 * Bytes of a body streamed without a declared length, counted as they arrive against its key's
 * rate (http-admission.ts): a refusal, answered 429 with `Retry-After`, or undefined.
 */
export type StreamedBytes = (bytes: number) => Promise<{ message: string; retryAfterS: number } | undefined>;

/** Why a body was not read whole: the answer to give. */
interface Refused {
  refused: string;
  status: number;
  retryAfterS: number;
}

/** A request's whole body, or undefined once it passes `maxBytes` (it stops reading there). */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const body = await readWithin(req, maxBytes, () => undefined);
  return Buffer.isBuffer(body) ? body : undefined;
}

/**
 * readBody, with the bytes held taken from `budget` as they arrive (the declared length at once):
 * the budget's refusal once it refuses them (it stops reading there). A body that declares no
 * length is also counted by `streamed` as it arrives, and is not given whole before every count
 * has answered.
 */
async function readWithin(
  req: IncomingMessage,
  maxBytes: number,
  budget: BodyBudget,
  streamed?: StreamedBytes,
): Promise<Buffer | undefined | Refused> {
  const declared = Number(req.headers["content-length"] ?? 0);
  let reserved = Number.isSafeInteger(declared) && declared > 0 ? declared : 0;
  const held = (refused: string): Refused => ({ refused, status: 503, retryAfterS: BODY_RETRY_S });
  const first = reserved > 0 ? budget(reserved) : undefined;
  if (first !== undefined) return held(first);
  const counting = reserved === 0 ? streamed : undefined;
  // Events, not `for await`: leaving an async iterator early destroys the request, and with it the
  // socket, so the client would read a reset instead of our refusal (see refuseUnread).
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const counts: Promise<unknown>[] = [];
    // A declared length is copied into its buffer as it arrives: no second copy of the whole body
    // at its end (45 ms of one turn for 16 MiB under load), and the body held once, not twice.
    const into = reserved > 0 ? Buffer.allocUnsafe(reserved) : undefined;
    let size = 0;
    const stop = (answer: undefined | Refused) => {
      req.off("data", onData).off("end", onEnd); // its error handler stays: a late error is no crash
      chunks.length = 0;
      resolve(answer);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return stop(undefined);
      if (size > reserved) {
        const more = budget(size - reserved);
        if (more !== undefined) return stop(held(more));
        reserved = size;
      }
      if (into === undefined) chunks.push(chunk);
      else {
        const at = size - chunk.length;
        const fits = Math.max(0, Math.min(chunk.length, into.length - at));
        if (fits > 0) into.set(fits === chunk.length ? chunk : chunk.subarray(0, fits), at);
        if (fits < chunk.length) chunks.push(chunk.subarray(fits));
      }
      if (counting !== undefined)
        counts.push(
          counting(chunk.length).then((r) => {
            if (r !== undefined) stop({ refused: r.message, status: 429, retryAfterS: r.retryAfterS });
          }),
        );
    };
    // Resolving again after a refusal (stop) changes nothing: the refusal stands.
    const whole = (): Buffer => {
      if (into === undefined) return Buffer.concat(chunks, size);
      return chunks.length === 0 ? into.subarray(0, size) : Buffer.concat([into, ...chunks], size);
    };
    const onEnd = () => void Promise.all(counts).then(() => resolve(whole()), reject);
    req.on("data", onData).once("end", onEnd).once("error", reject);
  });
}

/**
 * Reads and parses a JSON body once, within MAX_BODY_BYTES, MAX_JSON_DEPTH, the memory budget and
 * (for a body that declares no length) its key's rate.
 */
export async function readJson(
  req: IncomingMessage,
  budget?: BodyBudget,
  streamed?: StreamedBytes,
): Promise<BodyRead> {
  const tooLarge: BodyRead = {
    ok: false,
    status: 413,
    message: `Payload too large: the limit is ${byteSize(MAX_BODY_BYTES)}`,
  };
  if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return tooLarge;
  const body = await readWithin(req, MAX_BODY_BYTES, budget ?? (() => undefined), streamed);
  if (body === undefined) return tooLarge;
  if (!Buffer.isBuffer(body))
    return {
      ok: false,
      status: body.status,
      message: body.refused,
      headers: { "retry-after": String(body.retryAfterS) },
    };
  const parsed = body.length > LARGE_BODY_BYTES ? await parseOnThread(body, MAX_JSON_DEPTH) : parseHere(body);
  if (parsed.ok) return parsed;
  // A body nested past V8's own limit fails to parse too (RangeError), with the same answer.
  const message =
    parsed.why === "json"
      ? "Parse error: the body is not valid JSON"
      : `Bad Request: the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`;
  return { ok: false, status: 400, message };
}

/** A small body parsed on the event loop: handing it to the thread would cost more than it saves. */
function parseHere(body: Buffer): ThreadParse {
  let value: unknown;
  try {
    value = JSON.parse(decoded(body)) as unknown;
  } catch {
    return { ok: false, why: "json" };
  }
  return depthExceeds(value, MAX_JSON_DEPTH) ? { ok: false, why: "depth" } : { ok: true, value };
}

/** Bodies past this size are parsed on the parser's thread (http-body-thread.ts). */
export const LARGE_BODY_BYTES = 1024 * 1024;

/**
 * A body's text. Most are ASCII (base64 payloads always): checked at memory speed, their bytes are
 * their latin1 text, which V8 copies as is, where decoding UTF-8 walks every byte: 5 ms against 17
 * for 16 MiB, and the one-byte string parses faster (25 ms against 35).
 */
const decoded = (body: Buffer): string => (isAscii(body) ? body.toString("latin1") : body.toString("utf8"));

export const MIB = 1024 * 1024;

/**
 * The body budget of one request under its key: bytes are taken as they arrive (the declared
 * length first) and given back when the response is done, since the parsed body lives as long.
 */
export function bodyBudget(bodies: Shares, keyHash: string, res: ServerResponse, log: LimitLog): BodyBudget {
  let taken = 0;
  res.once("close", () => bodies.give(keyHash, taken));
  return (n) => {
    const refusal = bodies.take(keyHash, n);
    if (refusal === undefined) {
      taken += n;
      return undefined;
    }
    const limit = refusal.bound === "share" ? "bodyMiBPerKey" : "bodyMiB";
    log.note(
      limit,
      sourceOfKey(keyHash),
      `refused a request body: ${limit} ${refusal.limit / MIB} MiB in use`,
    );
    const whose = refusal.bound === "share" ? " for this key" : " on this server";
    return `Service Unavailable: request bodies${whose} are at their memory budget (${limit}, ${refusal.limit / MIB} MiB); retry after ${BODY_RETRY_S} s`;
  };
}

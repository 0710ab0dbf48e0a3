/**
 * The user's own media through the media viewer (docs/viewer.md#uploads). The model asks with
 * upload_asset (or upload_voice) and no path or data: where the client renders MCP Apps, the result
 * opens the viewer's upload form. The view then opens an upload through the app-only tool
 * viewer_upload (the declared size within the service's limit, the rights confirmed for a voice)
 * and sends the file in chunks, each checked (the first one's bytes must be media of the right
 * kind; chunk 0 before the others, which come in any order, each of its length) and written to the ledger's shared store, bounded
 * per key and per deployment (src/calls/uploads/upload-store.ts), so each chunk may reach any
 * replica. Only once every chunk is in does the replica that took the last one send the bytes to the
 * service, staged on its disk and streamed from there, once: an upload is never sent twice (the
 * service does not make uploads idempotent). Asking again about a finished upload, on any replica,
 * answers with what happened to it.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Asset, Voice } from "../../client/schemas.js";
import { LIMITS } from "../../config/service-limits.js";
import { VIEWER_UPLOAD_ANSWER_MS } from "../../config/time-limits.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import { okResult } from "../../mcp/results.js";
import { ArgumentError } from "../../shared/local-refusals.js";
import { byteSize } from "../../shared/wording.js";
import { sniff } from "../files/files.js";
import { checkVoiceDuration, decodeBase64Into, notMedia, notVoice, readDuration } from "./media-rules.js";
import { chunkStream, type KeptError, keepError, revive, withStagedFile } from "./upload-staging.js";
import { UPLOAD_CHUNK_BYTES, type Upload, UploadStore } from "./upload-store.js";

export type UploadKind = "asset" | "voice";

export interface ChunkArgs {
  /** The upload's ID from the first chunk's answer; absent on the first chunk. */
  upload?: string | undefined;
  kind?: UploadKind | undefined;
  size?: number | undefined;
  name?: string | undefined;
  rightsConfirmed?: boolean | undefined;
  seq?: number | undefined;
  data?: string | undefined;
}

/** Where an upload stands: still arriving, being sent to the service, or done with its result. */
export type ChunkAnswer =
  | { upload: string; state: "receiving" | "sending"; received: number; size: number }
  | { upload: string; state: "finished"; asset: Asset }
  | { upload: string; state: "finished"; voice: Voice };

/** What became of an upload sent to the service, as its record keeps it. */
type Sent = { ok: { asset: Asset } | { voice: Voice } } | { error: KeptError };

const MAX_BYTES: Record<UploadKind, number> = {
  asset: LIMITS.asset.maxBytes,
  voice: LIMITS.voice.maxBytes,
};

const stores = new WeakMap<object, UploadStore<UploadKind>>();
/**
 * The uploads of the engine's ledger, in its shared store: every key and every replica on that
 * store count against the same bounds (src/calls/uploads/upload-slots.ts).
 */
export async function uploadStore(engine: Engine): Promise<UploadStore<UploadKind>> {
  let store = stores.get(engine.ledger);
  if (store === undefined) {
    store = new UploadStore<UploadKind>(await engine.ledger.keyed(), await engine.ledger.chunks());
    stores.set(engine.ledger, store);
  }
  return store;
}

/** The uploads this process is sending now, with their outcome to come (another replica polls the record). */
const sending = new Map<string, Promise<{ sent: Sent; error?: unknown }>>();
/** How often a replica that is not sending an upload reads its record for the outcome. */
const POLL_MS = 100;

/** Opens an upload after the checks that need no byte: what it is for, how big, the rights. */
async function begin(
  engine: Engine,
  store: UploadStore<UploadKind>,
  args: ChunkArgs,
): Promise<Upload<UploadKind>> {
  if (args.seq !== undefined || args.data !== undefined)
    throw new ArgumentError(
      "upload",
      "a chunk names the upload it belongs to; open one first (kind and size, no data)",
    );
  const kind = args.kind;
  if (kind === undefined)
    throw new ArgumentError("kind", "an upload says what the file is for: asset or voice");
  const size = args.size;
  if (size === undefined) throw new ArgumentError("size", "an upload gives the file's size in bytes");
  if (size > MAX_BYTES[kind])
    throw new ArgumentError(
      "size",
      `the file is ${byteSize(size)}; a${kind === "asset" ? "n asset" : " voice"} may be at most ${byteSize(MAX_BYTES[kind])}`,
    );
  if (kind === "voice" && args.rightsConfirmed !== true) {
    throw new ArgumentError(
      "rightsConfirmed",
      "must be true: the user ticks that they have the speaker's permission to clone this voice before it is uploaded",
    );
  }
  return store.open(engine.keyHash, size, args.name, kind);
}

/** The first chunk's bytes must be media of the upload's kind: judged before they are stored. */
async function checkBytes(
  store: UploadStore<UploadKind>,
  u: Upload<UploadKind>,
  bytes: Uint8Array,
): Promise<void> {
  const why = (u.purpose === "asset" ? notMedia : notVoice)(await sniff(bytes.subarray(0, 4100)));
  if (why === undefined) return;
  await store.drop(u);
  throw new ArgumentError("data", `${u.name ?? "the file"} ${why} (judged by its bytes)`);
}

/** Sends the staged file to the service, once; the outcome is kept in the record, never thrown at no one. */
async function send(
  engine: Engine,
  store: UploadStore<UploadKind>,
  u: Upload<UploadKind>,
): Promise<{ sent: Sent; error?: unknown }> {
  let out: { sent: Sent; error?: unknown };
  try {
    let ok: Extract<Sent, { ok: unknown }>["ok"];
    if (u.purpose === "voice") {
      const voice = await withStagedFile(store, u, async (file) => {
        const duration = await readDuration(file);
        checkVoiceDuration(duration);
        return engine.client.uploadVoice({
          path: file,
          filename: u.name ?? "recording",
          duration,
          rightsConfirmed: true,
        });
      });
      ok = { voice };
    } else {
      // Straight from the store's chunks, typed by the first one's head (checked when it came).
      const head = (await store.chunk(u, 0)).subarray(0, 4100);
      const src = { stream: () => chunkStream(store, u), size: u.size, head };
      // Not tied to the call's signal: a host that gives up on the call must not cut the upload
      // halfway (its outcome would be unknown); the view asks again and gets the outcome.
      ok = { asset: await engine.client.uploadAsset(src, { filename: u.name }) };
    }
    out = { sent: { ok } };
  } catch (error) {
    out = { sent: { error: keepError(error) }, error };
  }
  await store.finish(u, out.sent).catch(() => {});
  return out;
}

const progress = (u: Upload<UploadKind>, state: "receiving" | "sending"): ChunkAnswer => ({
  upload: u.id,
  state,
  received: u.received,
  size: u.size,
});

const finished = (u: Upload<UploadKind>, sent: Sent, error?: unknown): ChunkAnswer => {
  if ("error" in sent) throw error ?? revive(sent.error);
  return { upload: u.id, state: "finished", ...sent.ok };
};

/** Waits up to `ms` for `p`; undefined when it has not settled by then. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where `u` stands; once it is being sent, its outcome if it comes within `withinMs`. */
async function answer(
  store: UploadStore<UploadKind>,
  u: Upload<UploadKind>,
  withinMs: number,
): Promise<ChunkAnswer> {
  if (u.state === "receiving") return progress(u, "receiving");
  if (u.state === "finished") return finished(u, u.outcome as Sent);
  const here = sending.get(u.id);
  if (here !== undefined) {
    const out = await within(here, withinMs);
    return out === undefined ? progress(u, "sending") : finished(u, out.sent, out.error);
  }
  // Sent by another replica (or by this process before it restarted): its record tells.
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(0, until - Date.now()))));
    const now = await store.get(u.owner, u.id);
    if (now.state === "finished") return finished(now, now.outcome as Sent);
  }
  return progress(u, "sending");
}

/**
 * One call from the view: without an upload ID it opens one (no bytes yet); with one, it brings
 * chunk `seq`. A chunk already accepted (its answer was lost on the way, or its first copy is still
 * being written) is answered as it stands and not stored twice; the last chunk again answers with
 * the upload's outcome. Any replica on the same store may take any call.
 */
export async function receiveChunk(
  engine: Engine,
  args: ChunkArgs,
  o: { store?: UploadStore<UploadKind>; answerWithinMs?: number } = {},
): Promise<ChunkAnswer> {
  const store = o.store ?? (await uploadStore(engine));
  if (args.upload === undefined) return progress(await begin(engine, store, args), "receiving");
  if (args.seq === undefined || args.data === undefined)
    throw new ArgumentError(
      args.seq === undefined ? "seq" : "data",
      "a chunk gives its number (seq) and its bytes (data, base64)",
    );
  const u = await store.get(engine.keyHash, args.upload);
  // Decoded once, into the bytes that are stored as they are (the store keeps no text of them).
  const into = Buffer.allocUnsafe(UPLOAD_CHUNK_BYTES + 3);
  const bytes = into.subarray(0, decodeBase64Into("data", args.data, into));
  const withinMs = o.answerWithinMs ?? VIEWER_UPLOAD_ANSWER_MS;
  if (args.seq === 0 && u.next === 0) await checkBytes(store, u, bytes.subarray(0, 4100));
  const stored = await store.append(u, args.seq, bytes);
  if (stored === "stored" && u.state === "sending") {
    // This call's compare-and-set moved the upload to "sending": it alone sends it.
    const job = send(engine, store, u).finally(() => sending.delete(u.id));
    sending.set(u.id, job);
  }
  return answer(store, u, withinMs);
}

/** What the view shows while the user chooses, and what the model is told. */
function askedFor(kind: UploadKind): { text: string; next: string; limits: Record<string, number> } {
  const { min, max } = LIMITS.voice.duration;
  if (kind === "voice") {
    return {
      text: `Asked the user for a recording: the media viewer shows an upload form, where they choose an MP3, WAV, OGG, M4A, AAC, FLAC or WebM file (${min} to ${max} s, up to ${byteSize(MAX_BYTES.voice)}) and tick that they have the speaker's permission to clone the voice. Nothing is uploaded yet.`,
      next: "wait for the user. The viewer hands you the new voice's ID (in your context, or as their message); use it with generate_audio, operation voice_clone, model service-voice, parameters.voiceProfileId. If the user sees no form, upload_voice with a path is the other way.",
      limits: { maxBytes: MAX_BYTES.voice, minSeconds: min, maxSeconds: max },
    };
  }
  return {
    text: `Asked the user for a file: the media viewer shows an upload form, where they choose an image, video or audio file (up to ${byteSize(MAX_BYTES.asset)}) on their device. Nothing is uploaded yet.`,
    next: "wait for the user. The viewer hands you the asset ID (in your context, or as their message); use it as sourceImage, endFrame, coverAudio or videoAssetId, or in referenceAssetIds. If the user sees no form, upload_asset with a path or base64 data is the other way.",
    limits: { maxBytes: MAX_BYTES.asset },
  };
}

/**
 * The model asked for the user's own media (upload_asset or upload_voice with no path or data).
 * Only a client that renders the media viewer can show the upload form; others are told what works.
 */
export function askForUpload(kind: UploadKind, ctx: ToolContext, field: string): CallToolResult {
  if (!ctx.rendersApps) {
    throw new ArgumentError(
      field,
      kind === "asset"
        ? "give exactly one: a file path, or the file's bytes as base64 data (this host shows no media viewer, where the user could choose the file)"
        : "is needed: this host shows no media viewer, where the user could choose the recording",
    );
  }
  const asked = askedFor(kind);
  return okResult(asked.text, { upload: { kind, ...asked.limits }, next: asked.next });
}

/**
 * Sends the file the user chose through the app-only tool viewer_upload: an upload opened with the
 * file's kind and size, then 512 KiB chunks (base64 grows each to 683 KiB, within every host's
 * message limits): chunk 0, then up to three at a time, then the last alone; the server
 * sends the file to the service only after the last one (src/calls/uploads/chunked-upload.ts). A chunk
 * whose answer the host lost is sent again, which the server answers without storing it twice;
 * the last chunk sent again only asks how the upload ended. The upload itself is never repeated:
 * when its outcome is unknown, the view says so and leaves the retry to the user.
 */
import { toBase64 } from "./media.js";
import type { Host } from "./protocol.js";
import { type Asset, type CallResult, textOf } from "./types.js";

/** As src/calls/uploads/upload-store.ts: every chunk but the last holds exactly this many bytes. */
export const CHUNK_BYTES = 512 * 1024;
/** Chunks on their way at once: the host's, the server's and this view's work overlap. */
const IN_FLIGHT = 3;

export type UploadKind = "asset" | "voice";
export type Uploaded = { asset: Asset } | { voice: { id: string; name: string } };

/** Why the upload did not happen, in words for the user; `reached` when the service may have it. */
export class UploadFailed extends Error {
  constructor(
    message: string,
    readonly reached: "no" | "unknown" | "refused",
  ) {
    super(message);
  }
}

interface Answer {
  upload: string;
  state: string;
  received?: number;
  size?: number;
  asset?: Asset;
  voice?: { id: string; name: string };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * A tool's refusal as the user needs to read it: without its code, the argument's name and the
 * next step meant for a model ("CODE: field: what is wrong. Next: …").
 */
const said = (r: CallResult) => {
  const line = (textOf(r).split("\n")[0] ?? "")
    .replace(/^[A-Z_]+: /, "")
    .replace(/^(data|size|seq|upload|kind|name|rightsConfirmed|duration): /, "")
    .replace(/ Next: .*$/, "")
    .trim();
  return /[.!?]$/.test(line) ? line : `${line}.`;
};

async function call(host: Host, args: Record<string, unknown>): Promise<CallResult> {
  return (await host.request("tools/call", { name: "viewer_upload", arguments: args })) as CallResult;
}

/**
 * Where a chunk stands: `store`, any chunk but the last (nothing can have reached the service);
 * `last`, the last one (its answer may be the service's); `ask`, the last one again, asking how the
 * upload ended (a server that no longer knows it cannot say whether the service got it).
 */
type Phase = "store" | "last" | "ask";

function refusal(r: CallResult, phase: Phase): UploadFailed {
  const text = textOf(r);
  const local = text.startsWith("INVALID_ARGUMENT") || text.startsWith("UPLOADS_BUSY");
  if (phase === "store" || (phase === "last" && local))
    return new UploadFailed(
      /nothing was sent/i.test(said(r)) ? said(r) : `${said(r)} Nothing reached the service.`,
      "no",
    );
  if (local || /may or may not have arrived/.test(text)) {
    const code = /^[A-Z_]+/.exec(text)?.[0] ?? "no answer";
    return new UploadFailed(
      `The upload broke off on its way to the service (${code}): the service may or may not have it, and uploading it again could make a second copy. Nothing was repeated.`,
      "unknown",
    );
  }
  return new UploadFailed(`The service refused the file: ${said(r)}`, "refused");
}

/** One chunk, sent again (at most twice) when the host loses it; refusals end the upload. */
async function sendChunk(host: Host, args: Record<string, unknown>, phase: Phase): Promise<Answer> {
  for (let attempt = 0; ; attempt++) {
    let r: CallResult;
    try {
      r = await call(host, args);
    } catch (err) {
      if (attempt < 2) {
        await pause(1000);
        continue;
      }
      const why = (err as Error).message;
      throw phase === "store"
        ? new UploadFailed(`The host did not pass the file on (${why}). Nothing reached the service.`, "no")
        : new UploadFailed(
            `The host lost touch with the server while the file was going to the service (${why}): whether it arrived is unknown. Nothing was repeated.`,
            "unknown",
          );
    }
    if (r.isError) throw refusal(r, phase);
    return r.structuredContent as unknown as Answer;
  }
}

/**
 * Uploads `file` as an asset or a voice; `onProgress` gets the share of bytes the server holds.
 * Resolves with the service's asset or voice; rejects with UploadFailed saying what happened.
 */
export async function sendFile(
  host: Host,
  file: File,
  kind: UploadKind,
  onProgress: (share: number, sending: boolean) => void,
): Promise<Uploaded> {
  const count = Math.max(1, Math.ceil(file.size / CHUNK_BYTES));
  // Opening carries no bytes, so asking again after a lost answer costs at most an idle upload.
  const opened = {
    kind,
    size: file.size,
    name: file.name,
    ...(kind === "voice" ? { rightsConfirmed: true } : {}),
  };
  const { upload } = await sendChunk(host, opened, "store");
  const encoded = (seq: number) => {
    const start = seq * CHUNK_BYTES;
    return toBase64(file.slice(start, Math.min(file.size, start + CHUNK_BYTES)));
  };
  // Answers may come back in another order than their chunks went: the bar only moves forward.
  let shown = 0;
  const store = async (seq: number) => {
    const answer = await sendChunk(host, { upload, seq, data: await encoded(seq) }, "store");
    shown = Math.max(shown, answer.received ?? 0);
    onProgress(shown / file.size, false);
  };
  // Chunk 0 first (the server checks the file's type in it), then the middle ones IN_FLIGHT at a
  // time in any order, then the last alone: only that one can complete the upload, so only its
  // answer may be the service's.
  if (count > 1) {
    await store(0);
    let taken = 1;
    let failed = false;
    // A refusal abandons the upload on the server: the other workers stop taking chunks.
    const worker = async () => {
      while (!failed && taken < count - 1)
        await store(taken++).catch((err: unknown) => {
          failed = true;
          throw err;
        });
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, count - 2) }, worker));
  }
  const lastArgs: Record<string, unknown> = { upload, seq: count - 1, data: await encoded(count - 1) };
  let answer: Answer | undefined = await sendChunk(host, lastArgs, "last");
  onProgress((answer.received ?? file.size) / file.size, true);
  // All bytes are in; the server answers once the service took them, or says it is still sending:
  // the last chunk again asks how it ended (the server never sends the file twice).
  for (let asked = 0; answer?.state === "sending"; asked++) {
    if (asked > 30) {
      throw new UploadFailed(
        "The service has not finished taking the file after many minutes: whether it arrived is unknown. Nothing was repeated.",
        "unknown",
      );
    }
    await pause(2000);
    answer = await sendChunk(host, lastArgs, "ask");
  }
  if (answer?.asset) return { asset: answer.asset };
  if (answer?.voice) return { voice: answer.voice };
  throw new UploadFailed(
    "The server gave no result for the upload: whether it arrived is unknown.",
    "unknown",
  );
}

/** What the model is told, as context (in the third person) or as the user's message. */
function handOffText(up: Uploaded, name: string, asUser: boolean): string {
  const who = asUser ? "I uploaded" : "The user uploaded";
  if ("asset" in up) {
    const { id, kind, state } = up.asset;
    return `${who} ${name} in the media viewer: asset ${id} (${kind}, ${state ?? "state unknown"}). Use "${id}" as sourceImage, endFrame, coverAudio or videoAssetId, or in referenceAssetIds.`;
  }
  const { id, name: voiceName } = up.voice;
  return `${who} ${name} in the media viewer as a private voice: ${id} (${voiceName}). Use it with generate_audio, operation voice_clone, model service-voice, parameters.voiceProfileId "${id}".`;
}

/**
 * Hands the new ID to the model: as context for its next turn (ui/update-model-context) where the
 * host takes it, else as the user's message (ui/message). A host that declares neither (the MCP
 * Inspector 2.12 answers ui/message all the same) is tried with both, context first.
 * Says which way it went, or undefined when the host took neither.
 */
export async function handOff(
  host: Host,
  up: Uploaded,
  name: string,
): Promise<"context" | "message" | undefined> {
  const caps = host.capabilities;
  // What the host declares first; the other way too, should that fail or nothing be declared.
  const tries: Array<"context" | "message"> =
    caps.message !== undefined && caps.updateModelContext === undefined
      ? ["message", "context"]
      : ["context", "message"];
  for (const way of tries) {
    try {
      const r =
        way === "context"
          ? ((await host.request("ui/update-model-context", {
              content: [{ type: "text", text: handOffText(up, name, false) }],
              structuredContent: up,
            })) as { isError?: boolean })
          : ((await host.request("ui/message", {
              role: "user",
              content: [{ type: "text", text: handOffText(up, name, true) }],
            })) as { isError?: boolean });
      if (!r.isError) return way;
    } catch {
      // Not taken this way: try the next.
    }
  }
  return undefined;
}

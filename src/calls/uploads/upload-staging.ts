/**
 * The replica that took an upload's last chunk sends it. An asset goes as a stream of its chunks,
 * each read from the shared store as the service client asks for the next (one read ahead, so the
 * store's read overlaps the network's write): no file, and one or two chunks' bytes in memory
 * whatever the file's size. A voice needs a file (its duration is probed, and it goes as a
 * multipart form): its chunks are written one at a time into a private temporary directory of
 * this process (0700, files 0600, removed at exit), streamed from disk, and deleted once sent.
 * Also how an outcome is kept in the store, so a replica that did not send it answers with the
 * same words.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ServiceError } from "../../client/service-errors.js";
import { CodedError } from "../../shared/coded-error.js";
import { LocalRefusal } from "../../shared/local-refusals.js";
import { chunkCount, type Upload, type UploadStore } from "./upload-store.js";

let dir: string | undefined;
/** The private directory, made on first use and removed when the process exits. */
function directory(): string {
  if (dir === undefined) {
    const made = mkdtempSync(path.join(tmpdir(), "generation-mcp-uploads-"));
    process.once("exit", () => rmSync(made, { recursive: true, force: true }));
    dir = made;
  }
  return dir;
}

/** The upload's bytes as a pull-driven stream of its chunks, read from the store in order. */
export function chunkStream<T>(store: UploadStore<T>, u: Upload<T>): ReadableStream<Uint8Array> {
  let seq = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        controller.enqueue(await store.chunk(u, seq++));
        if (seq >= chunkCount(u.size)) controller.close();
      },
    },
    { highWaterMark: 1 },
  );
}

/** Runs `use` on the upload's bytes as one private file, deleted afterwards whatever happens. */
export async function withStagedFile<T, R>(
  store: UploadStore<T>,
  u: Upload<T>,
  use: (file: string) => Promise<R>,
): Promise<R> {
  const file = path.join(directory(), u.id);
  try {
    // "wx": a fresh file only; 0600: this process's user alone reads it.
    const handle = await open(file, "wx", 0o600);
    try {
      let at = 0;
      for (let seq = 0; seq < chunkCount(u.size); seq++) {
        const bytes = await store.chunk(u, seq);
        await handle.write(bytes, 0, bytes.byteLength, at);
        at += bytes.byteLength;
      }
    } finally {
      await handle.close();
    }
    return await use(file);
  } finally {
    await rm(file, { force: true }).catch(() => {});
  }
}

/** An error as the store keeps it: enough to say it again in the same words. */
export type KeptError =
  | {
      kind: "service";
      message: string;
      status: number | undefined;
      code: string;
      serviceCode: boolean;
      outcome: ServiceError["outcome"];
      requestKind: ServiceError["requestKind"];
      retryAfterMs: number | undefined;
    }
  | { kind: "local"; code: string; message: string; action: string }
  | { kind: "other"; message: string };

export function keepError(err: unknown): KeptError {
  if (err instanceof ServiceError) {
    const { message, status, code, serviceCode, outcome, requestKind, retryAfterMs } = err;
    return { kind: "service", message, status, code, serviceCode, outcome, requestKind, retryAfterMs };
  }
  if (err instanceof CodedError)
    return { kind: "local", code: err.code, message: err.message, action: err.action };
  return { kind: "other", message: err instanceof Error ? err.message : String(err) };
}

/** The kept error as one that reads as the original did (src/mcp/results.ts describes both alike). */
export function revive(e: KeptError): Error {
  if (e.kind === "service") {
    const init = {
      message: e.message,
      status: e.status,
      code: e.serviceCode ? e.code : undefined,
      requestKind: e.requestKind,
      retryAfterMs: e.retryAfterMs,
    };
    return new ServiceError(init, e.code, e.outcome);
  }
  if (e.kind === "local") return new LocalRefusal(e.code, e.message, e.action);
  return new Error(e.message);
}

/**
 * The replica that took an upload's last chunk sends it: its chunks are read back from the shared
 * store one at a time into a file in a private temporary directory of this process (0700, files
 * 0600, removed at exit), which the service client streams from disk, and which is deleted once
 * sent. One chunk's bytes at a time in memory, whatever the file's size. Also how an outcome is
 * kept in the store, so a replica that did not send it answers with the same words.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ServiceError } from "../../client/service-errors.js";
import { CodedError } from "../../shared/coded-error.js";
import { LocalRefusal } from "../../shared/local-refusals.js";
import { chunkCount, UPLOAD_CHUNK_BYTES, type Upload, type UploadStore } from "./upload-store.js";

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
      // One buffer for every chunk of this file: its bytes are written before the next is read.
      const bytes = Buffer.alloc(UPLOAD_CHUNK_BYTES);
      let at = 0;
      for (let seq = 0; seq < chunkCount(u.size); seq++) {
        const n = await store.chunk(u, seq, bytes);
        await handle.write(bytes, 0, n, at);
        at += n;
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

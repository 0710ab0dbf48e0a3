/**
 * Downloads signed output URLs. The URL is its own credential and usually lives on another
 * host, so the service key is never attached; the size is bounded before and while reading.
 */

import { ArgumentError } from "../shared/local-refusals.js";
import { byteSize } from "../shared/wording.js";
import { failureOf, type Limit, limitSignal } from "./deadline.js";
import { DEFAULT_TIMEOUT_MS, type FetchLike, type RequestSpec } from "./http-request.js";
import { errorOf } from "./responses.js";
import { OutputTooLargeError, OutputUnavailableError, ServiceError } from "./service-errors.js";

export interface DownloadOptions {
  fetch: FetchLike;
  timeoutMs?: number | undefined;
  maxBytes: number;
  signal?: AbortSignal | undefined;
  /** The read retry policy of the request path (transient failures only). */
  retrying: <T>(spec: RequestSpec, attempt: () => Promise<T>) => Promise<T>;
}

export async function downloadOutput(
  url: string,
  o: DownloadOptions,
): Promise<{ bytes: Uint8Array; mimeType: string }> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new ArgumentError("url", "must be an absolute http(s) URL");
  }
  if (target.protocol !== "https:" && target.protocol !== "http:") {
    throw new ArgumentError("url", "must be an absolute http(s) URL");
  }
  if (!Number.isSafeInteger(o.maxBytes) || o.maxBytes < 1) {
    throw new ArgumentError("maxBytes", "must be a positive whole number of bytes");
  }
  // Messages name the host and path only: the query string is the signature.
  const what = `GET ${target.origin}${target.pathname}`;
  const spec: RequestSpec = { method: "GET", path: target.pathname, kind: "read", signal: o.signal };
  return o.retrying(spec, async () => {
    const d = limitSignal(o.signal, o.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    try {
      let res: Response;
      try {
        res = await o.fetch(target.href, { method: "GET", headers: { accept: "*/*" }, signal: d.signal });
      } catch (err) {
        throw failureOf(err, d, o.signal, what, "read");
      }
      if (!res.ok) {
        if (res.status >= 500 || res.status === 408 || res.status === 429)
          throw await errorOf(res, "read", what, d.signal);
        void res.body?.cancel().catch(() => {});
        throw new OutputUnavailableError({
          status: res.status,
          message: `${what}: HTTP ${res.status}: the signed URL was refused (it may have expired)`,
        });
      }
      const tooLarge = (seen: string) =>
        new OutputTooLargeError(
          {
            status: res.status,
            message: `${what}: the output is ${seen}, more than the limit of ${byteSize(o.maxBytes)}`,
          },
          o.maxBytes,
        );
      const declared = Number(res.headers.get("content-length") ?? Number.NaN);
      if (declared > o.maxBytes) {
        void res.body?.cancel().catch(() => {});
        throw tooLarge(byteSize(declared));
      }
      const bytes = await readBounded(res, d, o.maxBytes, tooLarge).catch((err: unknown) => {
        throw err instanceof ServiceError ? err : failureOf(err, d, o.signal, what, "read");
      });
      const mimeType = (res.headers.get("content-type") ?? "application/octet-stream").split(";")[0]?.trim();
      return { bytes, mimeType: mimeType || "application/octet-stream" };
    } finally {
      d.release();
    }
  });
}

/**
 * Reads a body into one buffer, stopping (and cancelling the download) as soon as it passes
 * `maxBytes`; each chunk re-arms the deadline, so only a stalled download times out.
 */
async function readBounded(
  res: Response,
  d: Limit,
  maxBytes: number,
  tooLarge: (seen: string) => Error,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (res.body) {
    const reader = res.body.getReader();
    const onAbort = () => void reader.cancel().catch(() => {});
    d.signal.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        const next = await reader.read();
        if (d.signal.aborted) throw d.signal.reason;
        if (next.done) break;
        d.touch();
        total += next.value.byteLength;
        if (total > maxBytes) {
          void reader.cancel().catch(() => {});
          throw tooLarge(`at least ${byteSize(total)}`);
        }
        chunks.push(next.value);
      }
    } finally {
      d.signal.removeEventListener("abort", onAbort);
    }
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

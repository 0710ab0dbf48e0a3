/**
 * Log lines are scrubbed of the keys in use: the service may echo a key in an error, and whatever
 * writes to stderr (our own lines, the SDK's, Node's warnings) goes through the stream's `write`.
 */
import type { Writable } from "node:stream";

/** From now on, every chunk written to `stream` is scrubbed first (as UTF-8 text). */
export function scrubWrites(stream: Writable, scrub: (text: string) => string): void {
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === "string" || chunk instanceof Uint8Array) {
      // A string may come with its encoding; the text is written back as UTF-8 either way.
      const encoding = typeof rest[0] === "string" ? (rest[0] as BufferEncoding) : "utf8";
      const tail = typeof rest[0] === "string" ? rest.slice(1) : rest;
      const bytes = typeof chunk === "string" ? Buffer.from(chunk, encoding) : Buffer.from(chunk);
      return write(scrub(bytes.toString("utf8")), "utf8", ...tail);
    }
    return write(chunk, ...rest);
  }) as typeof stream.write;
}

/**
 * Reading a JSON body (src/transports/http-body.ts): whatever its pieces, and, past
 * LARGE_BODY_BYTES, parsed on the parser's thread (src/transports/http-body-thread.ts) so that what
 * arrives meanwhile is served.
 */
import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { LARGE_BODY_BYTES, readJson } from "../../src/transports/http-body.js";
import { MAX_JSON_DEPTH } from "../../src/transports/http-guard.js";

/** A request whose body arrives in `pieces`, with the headers given. */
function request(pieces: Buffer[], headers: Record<string, string>): IncomingMessage {
  const stream = Object.assign(new PassThrough(), { headers });
  setImmediate(() => {
    for (const piece of pieces) stream.write(piece);
    stream.end();
  });
  return stream as unknown as IncomingMessage;
}

describe("readJson", () => {
  const value = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { text: "é".repeat(300_000) } };
  const bytes = Buffer.from(JSON.stringify(value));
  const pieces = [bytes.subarray(0, 1), bytes.subarray(1, 70_000), bytes.subarray(70_000)];

  it("reads a body of declared length, copied in as it arrives, whatever its pieces", async () => {
    const read = await readJson(request(pieces, { "content-length": String(bytes.length) }));
    expect(read).toEqual({ ok: true, value });
  });

  it("reads a body streamed without a length", async () => {
    const read = await readJson(request(pieces, { "transfer-encoding": "chunked" }));
    expect(read).toEqual({ ok: true, value });
  });
});

describe("a large body", () => {
  const big = {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { data: "QUJD".repeat(1_000_000), n: [1, 2.5] },
  };
  const bytes = Buffer.from(JSON.stringify(big));
  const declared = { "content-length": String(bytes.length) };

  it("is parsed off the event loop, and given back whole", async () => {
    expect(bytes.length).toBeGreaterThan(LARGE_BODY_BYTES);
    const parse = vi.spyOn(JSON, "parse");
    try {
      const read = await readJson(request([bytes], declared));
      expect(read).toEqual({ ok: true, value: big });
      // Not one JSON.parse on this thread: the text went to the parser's thread.
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });

  it("that is not JSON, or nests too deep, is refused as a small one is", async () => {
    const broken = Buffer.concat([bytes.subarray(0, bytes.length - 1), Buffer.from("!")]);
    expect(await readJson(request([broken], { "content-length": String(broken.length) }))).toMatchObject({
      ok: false,
      status: 400,
      message: "Parse error: the body is not valid JSON",
    });
    const deep = Buffer.from(
      `${"[".repeat(MAX_JSON_DEPTH + 1)}"${"x".repeat(LARGE_BODY_BYTES)}"${"]".repeat(MAX_JSON_DEPTH + 1)}`,
    );
    expect(await readJson(request([deep], { "transfer-encoding": "chunked" }))).toMatchObject({
      ok: false,
      status: 400,
      message: `Bad Request: the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`,
    });
  });

  it("several at once each get their own value back", async () => {
    const bodies = [1, 2, 3].map((id) => Buffer.from(JSON.stringify({ ...big, id })));
    const reads = await Promise.all(
      bodies.map((b) => readJson(request([b], { "transfer-encoding": "chunked" }))),
    );
    expect(reads.map((r) => (r.ok ? (r.value as { id: number }).id : r))).toEqual([1, 2, 3]);
  });
});

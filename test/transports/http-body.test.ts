/**
 * Large bodies are parsed one per turn of the event loop (src/transports/http-body.ts), so that
 * what arrived meanwhile is served between them.
 */
import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { largeParseTurn, readJson } from "../../src/transports/http-body.js";

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

describe("largeParseTurn", () => {
  it("lets a turn of the event loop pass between two large parses", async () => {
    const order: string[] = [];
    const first = largeParseTurn().then((release) => {
      order.push("first parsed");
      // Stands for a user's request that arrived while the first body was parsed.
      setImmediate(() => order.push("served between"));
      release();
    });
    const second = largeParseTurn().then((release) => {
      order.push("second parsed");
      release();
    });
    await Promise.all([first, second]);
    expect(order).toEqual(["first parsed", "served between", "second parsed"]);
  });

  it("goes on after a parse that failed released its turn", async () => {
    const release = await largeParseTurn();
    release();
    const next = await Promise.race([
      largeParseTurn().then((r) => {
        r();
        return "parsed";
      }),
      new Promise((r) => setTimeout(() => r("stuck"), 200)),
    ]);
    expect(next).toBe("parsed");
  });
});

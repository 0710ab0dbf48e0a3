import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { keyScrubber } from "../../src/shared/scrub.js";
import { scrubWrites } from "../../src/transports/scrub-writes.js";

const HEX = randomBytes(32).toString("hex");

/** A stream that keeps what reached it, as stderr's bytes would. */
function sink(): { stream: Writable; written: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  return { stream, written: () => Buffer.concat(chunks).toString("utf8") };
}

describe("scrubWrites", () => {
  it("scrubs strings, strings in another encoding and byte chunks, and still calls back", async () => {
    const { stream, written } = sink();
    scrubWrites(stream, keyScrubber(`lgk_${HEX}`));
    stream.write(`generation-mcp: refused ${HEX.toUpperCase()}\n`);
    stream.write(Buffer.from(`bytes lgk_${HEX}\n`));
    stream.write(Buffer.from(`hex-encoded ${HEX}\n`).toString("hex"), "hex");
    await new Promise<void>((done) => stream.write("last\n", () => done()));
    const out = written();
    expect(out.toLowerCase()).not.toContain(HEX.slice(0, 16));
    expect(out).toBe("generation-mcp: refused [redacted]\nbytes [redacted]\nhex-encoded [redacted]\nlast\n");
  });

  it("leaves objects of an object-mode stream alone", () => {
    const seen: unknown[] = [];
    const stream = new Writable({
      objectMode: true,
      write(chunk, _e, done) {
        seen.push(chunk);
        done();
      },
    });
    scrubWrites(stream, () => "scrubbed");
    stream.write({ a: 1 });
    expect(seen).toEqual([{ a: 1 }]);
  });
});

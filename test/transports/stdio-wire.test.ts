/**
 * The stdio line guard on its own: whole lines pass one at a time, a line over the cap is dropped
 * as it streams and reported once with its start, and the request ID of a refused line is read only
 * from before its params.
 */
import { describe, expect, it } from "vitest";
import { LineGuard, leadingId } from "../../src/transports/stdio-wire.js";

function run(max: number, chunks: string[]): { lines: string[]; refused: string[] } {
  const lines: string[] = [];
  const refused: string[] = [];
  const guard = new LineGuard(max, (prefix) => refused.push(prefix));
  guard.on("data", (c: Buffer) => lines.push(c.toString()));
  for (const c of chunks) guard.write(Buffer.from(c));
  guard.end();
  return { lines, refused };
}

describe("LineGuard", () => {
  it("passes whole lines one push each, however the input is cut", () => {
    const { lines, refused } = run(100, ['{"a":', '1}\n{"b":2}\n{"c"', ":3}\n"]);
    expect(lines).toEqual(['{"a":1}\n', '{"b":2}\n', '{"c":3}\n']);
    expect(refused).toEqual([]);
  });

  it("drops a line over the cap, keeps the lines around it, and reports it once", () => {
    const long = `{"jsonrpc":"2.0","id":7,"params":{"x":"${"y".repeat(300)}"}}`;
    const { lines, refused } = run(100, ['{"id":1}\n', long.slice(0, 150), long.slice(150), '\n{"id":2}\n']);
    expect(lines).toEqual(['{"id":1}\n', '{"id":2}\n']);
    expect(refused).toHaveLength(1);
    expect(leadingId(refused[0] ?? "")).toBe(7);
  });

  it("reads the request ID only from before params", () => {
    expect(leadingId('{"jsonrpc":"2.0","id":"abc","method":"x"')).toBe("abc");
    expect(leadingId('{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"id":5}}')).toBeNull();
    expect(leadingId('{"method":"x","params":{},"id":9')).toBeNull();
  });
});

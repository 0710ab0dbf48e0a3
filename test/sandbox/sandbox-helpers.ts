import { crc32, inflateSync } from "node:zlib";
import { expect } from "vitest";
import { PNG_SIGNATURE } from "../../src/sandbox/media/png.js";

/** Walks PNG chunks, checking each CRC, and returns IHDR dims plus the inflated image data. */
export function decodePng(png: Uint8Array): { width: number; height: number; raw: Buffer } {
  const buf = Buffer.from(png);
  expect(buf.subarray(0, 8).equals(Buffer.from(PNG_SIGNATURE))).toBe(true);
  let off = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  let sawEnd = false;
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString("latin1", off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    expect(buf.readUInt32BE(off + 8 + len)).toBe(crc32(buf.subarray(off + 4, off + 8 + len)));
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
    } else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") sawEnd = true;
    off += 12 + len;
  }
  expect(sawEnd).toBe(true);
  return { width, height, raw: inflateSync(Buffer.concat(idat)) };
}

import {
  createSandbox,
  SANDBOX_API_KEY,
  type Sandbox,
  type SandboxOptions,
} from "../../src/sandbox/sandbox.js";

export interface Harness {
  sb: Sandbox;
  base: string;
  /** fetch against the sandbox over real HTTP, with the given key (default: the sandbox key). */
  call(path: string, init?: RequestInit & { key?: string | null; idem?: string }): Promise<Response>;
  /** POST JSON with an Idempotency-Key. */
  post(path: string, body: unknown, o?: { key?: string; idem?: string }): Promise<Response>;
  close(): Promise<void>;
}

let counter = 0;
export const freshIdem = (): string => `test-${process.pid}-${++counter}-${Date.now()}`;

export async function startSandbox(o: SandboxOptions = {}): Promise<Harness> {
  const sb = createSandbox({ now: () => 1_800_000_000_000, seed: "test", ...o });
  const server = await sb.listen({ port: 0, host: "127.0.0.1" });
  const call: Harness["call"] = (path, init = {}) => {
    const { key = SANDBOX_API_KEY, idem, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (key !== null) headers.set("authorization", `Bearer ${key}`);
    if (idem !== undefined) headers.set("idempotency-key", idem);
    return fetch(`${server.url}${path}`, { ...rest, headers });
  };
  return {
    sb,
    base: server.url,
    call,
    post: (path, body, po = {}) =>
      call(path, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
        idem: po.idem ?? freshIdem(),
        ...(po.key !== undefined ? { key: po.key } : {}),
      }),
    close: () => sb.close(),
  };
}

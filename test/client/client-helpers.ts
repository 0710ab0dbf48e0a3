/**
 * Shared pieces for the client tests: an msw server that refuses unhandled requests and
 * records every request it sees (so a test can prove nothing was sent), a valid key, and
 * small fixtures shaped like the service's responses (docs/service.md#responses).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll } from "vitest";
import { ServiceClient } from "../../src/client/service-client.js";

export const BASE = "https://service.test";
export const KEY = `lgk_${"0123456789abcdef".repeat(4)}`;

export interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
}

/** Starts msw for the file; `seen` holds each request that reached it (handlers read bodies). */
export function mockService() {
  const server = setupServer();
  const seen: Seen[] = [];
  server.events.on("request:start", ({ request }) => {
    seen.push({ method: request.method, url: request.url, headers: Object.fromEntries(request.headers) });
  });
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
  afterEach(() => {
    server.resetHandlers();
    seen.length = 0;
  });
  afterAll(() => server.close());
  return { server, seen };
}

export function client(o: { timeoutMs?: number } = {}): ServiceClient {
  return new ServiceClient({ baseUrl: BASE, apiKey: KEY, ...o });
}

export function task(over: Record<string, unknown> = {}) {
  return {
    id: "task_1",
    status: "queued",
    quotedGems: 10,
    chargedGems: 0,
    releasedGems: 0,
    error: null,
    outputs: [],
    ...over,
  };
}

export function tempDir(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "gen-client-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Minimal headers file-type recognises. */
export const MAGIC = {
  // Signature, IHDR, then an IDAT chunk header: sniffs as PNG whatever bytes follow.
  png: Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
    Buffer.from("IHDR"),
    Buffer.from([0, 0, 4, 0, 0, 0, 4, 0, 8, 2, 0, 0, 0, 0, 0, 0, 0]),
    Buffer.from([0, 0x10, 0, 0]),
    Buffer.from("IDAT"),
  ]),
  wav: Buffer.concat([
    Buffer.from("RIFF"),
    Buffer.from([0x24, 0, 0, 0]),
    Buffer.from("WAVEfmt "),
    Buffer.from([16, 0, 0, 0, 1, 0, 1, 0, 0x44, 0xac, 0, 0, 0x88, 0x58, 1, 0, 2, 0, 16, 0]),
    Buffer.from("data"),
    Buffer.from([0, 0, 0, 0]),
  ]),
  mp3: Buffer.from([0xff, 0xfb, 0x90, 0x64, 0, 0, 0, 0]),
  flac: Buffer.concat([Buffer.from("fLaC"), Buffer.from([0, 0, 0, 34])]),
  pdf: Buffer.from("%PDF-1.7\n"),
};

export interface Captured {
  method: string;
  path: string;
  search: string;
  headers: Headers;
  body: string;
  raw: Uint8Array;
}

/** `capture(method, path, reply)`: a handler on `server` that records the request and answers with `reply`. */
export function capturer(server: ReturnType<typeof setupServer>) {
  return (method: "get" | "post" | "head", path: string, reply: () => Response): Captured[] => {
    const got: Captured[] = [];
    server.use(
      http[method](`${BASE}${path}`, async ({ request }) => {
        const url = new URL(request.url);
        const raw = method === "post" ? new Uint8Array(await request.arrayBuffer()) : new Uint8Array();
        got.push({
          method: request.method,
          path: url.pathname,
          search: url.search,
          headers: request.headers,
          body: new TextDecoder().decode(raw),
          raw,
        });
        return reply();
      }),
    );
    return got;
  };
}

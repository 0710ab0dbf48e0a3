/**
 * Listen streams (src/transports/http-listens.ts): each key's share counted on every replica
 * together when a store is given, refused in-band naming the limit and when to retry; and a stream
 * that delivers no notification for its idle time is closed with an error naming listenIdleS, where
 * a keep-alive comment, or a notification the client has not taken, renews nothing.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Channel } from "../../src/mcp/delivery.js";
import { DeploymentShares, type ShareStore } from "../../src/shared/deployment-shares.js";
import { LimitLog } from "../../src/shared/fair-shares.js";
import { Listens } from "../../src/transports/http-listens.js";

const enc = new TextEncoder();
const dec = new TextDecoder();

function memoryStore(): ShareStore {
  const values = new Map<string, string>();
  return {
    get: async (k) => values.get(k),
    swap: async (k, expected, next) => {
      if (values.get(k) !== expected) return false;
      values.set(k, next);
      return true;
    },
  };
}

/** An SSE response whose frames the test pushes, and whether its source was cancelled. */
function sseSource() {
  let push: (frame: string) => void = () => {};
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      push = (frame) => c.enqueue(enc.encode(frame));
    },
    cancel() {
      cancelled = true;
    },
  });
  const response = new Response(body, { headers: { "content-type": "text/event-stream" } });
  return { response, push: (f: string) => push(f), cancelled: () => cancelled };
}

const note = (n: number) =>
  `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"n":${n}}}\n\n`;

describe("listen streams' idle time", () => {
  afterEach(() => vi.useRealTimers());
  const listens = () => new Listens({ total: 10, perKey: 2, idleMs: 10_000 }, new LimitLog(() => {}));

  it("a delivered notification renews it; keep-alives do not; past it the stream ends naming listenIdleS", async () => {
    vi.useFakeTimers();
    const src = sseSource();
    const reader = (
      listens().idleBound(src.response, "listen:1").body as ReadableStream<Uint8Array>
    ).getReader();
    src.push(note(1));
    expect(dec.decode((await reader.read()).value)).toContain('"n":1');
    await vi.advanceTimersByTimeAsync(9_000);
    src.push(note(2));
    expect(dec.decode((await reader.read()).value)).toContain('"n":2');
    await vi.advanceTimersByTimeAsync(9_000);
    src.push(": keepalive\n\n");
    expect(dec.decode((await reader.read()).value)).toBe(": keepalive\n\n");
    const last = reader.read();
    await vi.advanceTimersByTimeAsync(1_100);
    const closing = dec.decode((await last).value);
    expect(closing).toContain('"id":"listen:1"');
    expect(closing).toMatch(/no notification for 10 s \(listenIdleS\); listen again/);
    expect((await reader.read()).done).toBe(true);
    expect(src.cancelled()).toBe(true);
  });

  it("a notification the client does not take is no progress", async () => {
    vi.useFakeTimers();
    const src = sseSource();
    const reader = (listens().idleBound(src.response, 7).body as ReadableStream<Uint8Array>).getReader();
    src.push(note(1));
    await reader.read();
    // The client stops reading: notifications pile up at the source, unread.
    for (let t = 0; t < 10; t++) {
      src.push(note(t + 2));
      await vi.advanceTimersByTimeAsync(1_000);
    }
    await vi.advanceTimersByTimeAsync(100);
    expect(src.cancelled()).toBe(true);
    expect(dec.decode((await reader.read()).value)).toContain("listenIdleS");
  });
});

describe("listen streams' share across replicas", () => {
  it("two replicas on one store grant one key its share, refusing the rest naming listensPerKey, while another key is served", async () => {
    const store = memoryStore();
    const replica = (name: string) =>
      new Listens(
        { total: 10, perKey: 2, idleMs: 60_000 },
        new LimitLog(() => {}),
        new DeploymentShares(async () => store, { pool: "listens", perOwner: 2, replica: name }),
      );
    const [a, b] = [replica("a"), replica("b")];
    const channels = Array.from({ length: 8 }, () => new Channel(() => {}));
    const answers = await Promise.all(channels.map((c, i) => (i % 2 ? a : b).claim("hog", i, c)));
    expect(answers.filter((r) => r === undefined)).toHaveLength(2);
    const refused = answers.find((r) => r !== undefined) as Response;
    const body = (await refused.json()) as { error: { message: string; data: Record<string, unknown> } };
    expect(body.error.message).toMatch(
      /2 listen streams for this key( on all replicas together)? \(listensPerKey\); close one or retry after 30 s/,
    );
    expect(body.error.data).toMatchObject({ limit: "listensPerKey", retryAfterSeconds: 30 });
    expect(await a.claim("good", 99, new Channel(() => {}))).toBeUndefined();
    // A stream that ends gives its unit back on every replica.
    const held = channels.filter((_, i) => answers[i] === undefined);
    for (const c of held) c.end();
    await vi.waitFor(async () => expect(await b.claim("hog", 100, new Channel(() => {}))).toBeUndefined());
  });
});

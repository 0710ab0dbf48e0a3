/**
 * Connections before any request (src/transports/http-connections.ts): a share per address and a
 * total, each refusal a 503 naming the limit; a connection that sends nothing is ended after the
 * header timeout; a trusted proxy's connections count only in the total. And the operator's log
 * says each limit once a minute per source (src/shared/fair-shares.ts's LimitLog).
 */
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { LimitLog, Shares } from "../../src/shared/fair-shares.js";
import { startProbe } from "./http-probe.js";

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1", () => resolve(s));
    s.once("error", reject);
  });
}

/** What the server writes before it closes the connection (with no request sent). */
function answer(s: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    s.on("data", (d) => {
      text += d.toString();
    });
    s.on("error", () => {});
    s.once("close", () => resolve(text));
  });
}

/** The server's whole answer, without waiting for it to close the connection. */
function response(s: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    s.on("error", () => {});
    s.on("data", (d) => {
      text += d.toString();
      const [head = "", body = ""] = text.split("\r\n\r\n", 2);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? Number.NaN);
      if (Buffer.byteLength(body) >= length) resolve(text);
    });
  });
}

const closed = (s: Socket): Promise<number> => {
  const started = Date.now();
  return new Promise((resolve) => s.once("close", () => resolve(Date.now() - started)));
};

describe("connections", () => {
  it("refuses past the per-address share with a 503 naming it, and frees the slot on close", async () => {
    const lines: string[] = [];
    const h = await startProbe({
      limits: { connectionsPerAddress: 3, connections: 10 },
      onLimit: (line) => lines.push(line),
    });
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 3; i++) held.push(await open(h.port));
      const extra = [await open(h.port), await open(h.port)];
      const texts = await Promise.all(extra.map(response));
      for (const text of texts) {
        expect(text).toMatch(/^HTTP\/1.1 503/);
        expect(text).toMatch(/retry-after: \d+/i);
        expect(text).toMatch(/connectionsPerAddress, 3/);
      }
      // Said once for the source, not once per refusal.
      expect(lines.filter((l) => l.includes("connectionsPerAddress"))).toHaveLength(1);
      held.pop()?.destroy();
      await new Promise((r) => setTimeout(r, 100));
      const res = await fetch(h.url.replace("/mcp", "/healthz"));
      expect(res.status).toBe(200);
    } finally {
      for (const s of held) s.destroy();
      await h.close();
    }
  });

  it("counts a trusted proxy's connections in the total only", async () => {
    const h = await startProbe({
      limits: { connectionsPerAddress: 2, connections: 4 },
      isProxy: () => true,
      onLimit: () => {},
    });
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 4; i++) held.push(await open(h.port));
      const text = await response(await open(h.port));
      expect(text).toMatch(/too many connections \(connections, 4\)/);
    } finally {
      for (const s of held) s.destroy();
      await h.close();
    }
  });

  it("holds refused connections open for refusedHoldS, as many as one address's share, then closes them", async () => {
    // libuv accepts one connection a turn: a client reopening each refused connection at once
    // would otherwise keep its surplus in the accept queue ahead of everyone (http-connections.ts).
    const h = await startProbe({
      limits: { connectionsPerAddress: 2, connections: 10, refusedHoldS: 1 },
      onLimit: () => {},
    });
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 2; i++) held.push(await open(h.port));
      const refused = [await open(h.port), await open(h.port)];
      const closings = refused.map(closed);
      const texts = await Promise.all(refused.map(response));
      for (const text of texts) expect(text).toMatch(/connectionsPerAddress, 2/);
      // Past the held bound (connectionsPerAddress, 2): answered and closed at once.
      const third = await open(h.port);
      const thirdClosing = closed(third);
      expect(await response(third)).toMatch(/^HTTP\/1.1 503/);
      expect(await thirdClosing).toBeLessThan(500);
      for (const took of await Promise.all(closings)) {
        expect(took).toBeGreaterThanOrEqual(900);
        expect(took).toBeLessThan(3_000);
      }
    } finally {
      for (const s of held) s.destroy();
      await h.close();
    }
  });

  it("ends a connection that sends no byte within the header timeout", async () => {
    const h = await startProbe({
      limits: { headersTimeoutS: 1 },
    });
    try {
      const s = await open(h.port);
      const started = Date.now();
      await answer(s);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(900);
      expect(took).toBeLessThan(5_000);
    } finally {
      await h.close();
    }
  });
});

describe("fair-share pools and their log", () => {
  it("forgets an owner that holds nothing, so the heap follows what is held", () => {
    const pool = new Shares(10, 2);
    for (let i = 0; i < 5_000; i++) {
      expect(pool.take(`k${i}`)).toBeUndefined();
      pool.give(`k${i}`);
    }
    expect(pool.owners).toBe(0);
    expect(pool.used).toBe(0);
    expect(pool.take("a", 3)).toEqual({ bound: "share", limit: 2 });
  });

  it("logs a limit once a minute per source, and again after the minute", () => {
    const lines: string[] = [];
    let now = 1_000;
    const log = new LimitLog((l) => lines.push(l), { now: () => now });
    for (let i = 0; i < 100; i++) log.note("sessions", "key abc", "refused");
    log.note("sessions", "key def", "refused");
    expect(lines).toHaveLength(2);
    now += 59_000;
    log.note("sessions", "key abc", "refused");
    expect(lines).toHaveLength(2);
    now += 2_000;
    log.note("sessions", "key abc", "refused");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/refused \(sessions, source key abc; said at most once a minute per source\)/);
  });
});

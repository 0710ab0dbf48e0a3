/**
 * The HTTP transport's session caps, its answer with no usable default key, and /healthz, each on a
 * server of its own behind the one-tool probe (http-probe.ts).
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { hash, INIT, KEY_A, KEY_B, startProbe, whoami } from "./http-probe.js";

describe("HTTP without a usable default key", () => {
  it("answers 401 when no Bearer key comes and none is configured", async () => {
    const bare = await startProbe();
    try {
      const res = await fetch(bare.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: INIT,
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/Bearer/);
    } finally {
      await bare.close();
    }
  });
});

describe("HTTP session caps", () => {
  const MADE_UP = `lgk_${"0".repeat(64)}`;

  function init(url: string, key: string) {
    return fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${key}`,
      },
      body: INIT,
    });
  }

  it("caps sessions per key: idle sessions under a made-up key do not block a real key's initialize", async () => {
    const capped = await startProbe({
      sessions: { maxPerKey: 5, maxSessions: 8 },
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await init(capped.url, MADE_UP)).status);
      expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
      expect(statuses.slice(5).every((s) => s === 503)).toBe(true);
      expect(capped.sessionCount()).toBe(5);

      const real = await connect2(capped.url, KEY_A);
      expect(await whoami(real.client)).toBe(hash(KEY_A));
      await real.client.close();
    } finally {
      await capped.close();
    }
  });

  it("makes room by closing a session that never made a successful call, never one that did", async () => {
    const capped = await startProbe({
      sessions: { maxPerKey: 2, maxSessions: 3 },
    });
    try {
      const proven = await connect2(capped.url, KEY_A);
      expect(await whoami(proven.client)).toBe(hash(KEY_A));
      // Many made-up keys, two idle sessions each: the table stays usable.
      for (const k of ["1", "2", "3", "4"]) {
        const key = `lgk_${k.repeat(64)}`;
        expect((await init(capped.url, key)).status).toBe(200);
        expect((await init(capped.url, key)).status).toBe(200);
      }
      expect(capped.sessionCount()).toBe(3);
      // The session that made a successful call is still there.
      expect(await whoami(proven.client)).toBe(hash(KEY_A));
      const fresh = await connect2(capped.url, KEY_B);
      expect(await whoami(fresh.client)).toBe(hash(KEY_B));
      await proven.client.close();
      await fresh.client.close();
    } finally {
      await capped.close();
    }
  });

  it("idles out sessions that never made a successful call after minutes, the others after an hour", async () => {
    const h = await startProbe();
    try {
      const proven = await connect2(h.url, KEY_A);
      await whoami(proven.client);
      expect((await init(h.url, MADE_UP)).status).toBe(200);
      expect(h.sessionCount()).toBe(2);
      h.sweepSessions(Date.now() + 3 * 60 * 1000);
      expect(h.sessionCount()).toBe(1);
      expect(await whoami(proven.client)).toBe(hash(KEY_A));
      h.sweepSessions(Date.now() + 61 * 60 * 1000);
      expect(h.sessionCount()).toBe(0);
      await proven.client.close().catch(() => {});
    } finally {
      await h.close();
    }
  });
});

describe("HTTP session idle time", () => {
  afterEach(() => vi.useRealTimers());

  it("is renewed by a call that succeeds, never by one that is refused", async () => {
    // Only the clock is faked: sockets and their timers stay real.
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.now();
    const h = await startProbe();
    try {
      const busy = await connect2(h.url, KEY_A);
      const refused = await connect2(h.url, KEY_B);
      await whoami(busy.client);
      await whoami(refused.client);
      vi.setSystemTime(t0 + 50 * 60_000);
      await whoami(busy.client);
      // Calls that did not succeed (an unknown tool; one that reports no success): not progress.
      await refused.client.callTool({ name: "no_such_tool", arguments: {} }).catch(() => {});
      await refused.client.callTool({ name: "channel", arguments: {} }).catch(() => {});
      h.sweepSessions(t0 + 61 * 60_000);
      expect(h.sessionCount()).toBe(1);
      expect(await whoami(busy.client)).toBe(hash(KEY_A));
      await Promise.all([busy.client.close(), refused.client.close()].map((p) => p.catch(() => {})));
    } finally {
      await h.close();
    }
  });
});

describe("HTTP /healthz", () => {
  it("answers 200 when the ledger is usable and 503 when not, naming no error", async () => {
    let usable = true;
    const h = await startProbe({
      health: async () => {
        if (!usable) throw new Error("SQLITE_CANTOPEN /secret/path lgk_0000");
      },
    });
    try {
      const ok = await fetch(new URL("/healthz", h.url));
      expect(ok.status).toBe(200);
      usable = false;
      const down = await fetch(new URL("/healthz", h.url));
      expect(down.status).toBe(503);
      const text = await down.text();
      expect(text).not.toMatch(/secret|lgk_|SQLITE/);
    } finally {
      await h.close();
    }
  });
});

async function connect2(url: string, key: string) {
  const client = new Client({ name: "test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

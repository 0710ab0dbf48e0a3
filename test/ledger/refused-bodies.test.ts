/**
 * Nothing stored for free (src/ledger/writes.ts's bodyStub): a request refused for good before any
 * charge keeps no body beyond what its listing shows, so 300 refused 120 KB calls store a few
 * hundred KB, not 35 MiB; a retained answer (replayed under its identity) keeps its bytes.
 */
import { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hashKey, type Ledger } from "../../src/ledger/open-ledger.js";
import { TABLE } from "../../src/ledger/stores/sqlite-queries.js";
import { API_KEY, fastLedger, scriptedSend, serviceError, tempDir } from "./ledger-helpers.js";

const keyHash = hashKey(API_KEY);
let t: ReturnType<typeof tempDir>;
let ledger: Ledger;
beforeEach(async () => {
  t = tempDir();
  ledger = await fastLedger(t.uri);
});
afterEach(async () => {
  await ledger.close();
  t.cleanup();
});

const chat = (i: number) =>
  JSON.stringify({
    model: "sandbox-chat",
    messages: [{ role: "user", content: `question ${i}: ${"long context ".repeat(9_300)}` }],
  });

function storedBytes(path: string): number {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const row = db.prepare(`SELECT SUM(LENGTH(value)) AS n, COUNT(*) AS c FROM ${TABLE}`).get() as {
      n: number;
    };
    return row.n;
  } finally {
    db.close();
  }
}

describe("a request refused before any charge", () => {
  it("300 refused 120 KB chat calls store at most 1 KB each", async () => {
    const s = scriptedSend([serviceError(409, "PRICE_CHANGED")]);
    expect(chat(0).length).toBeGreaterThan(120_000);
    for (let i = 0; i < 300; i++) {
      const req = { keyHash, tool: "chat", endpoint: "/api/chat", bytes: chat(i) };
      await expect(ledger.run(req, s.send, s.ref)).rejects.toMatchObject({ state: "closed" });
    }
    const total = storedBytes(t.path);
    expect(total).toBeLessThan(300 * 1024);
    const listed = await ledger.list(keyHash);
    expect(listed[0]).toMatchObject({ state: "closed", model: "sandbox-chat" });
    expect(listed[0]?.prompt).toMatch(/^question \d+: long context/);
  });

  it("a retained answer keeps its bytes: an identical call replays them", async () => {
    const body = chat(1);
    const s = scriptedSend([serviceError(409, "ANALYSIS_FAILED")]);
    const req = { keyHash, tool: "extract", endpoint: "/api/extract", bytes: body };
    await expect(ledger.run(req, s.send, s.ref)).rejects.toMatchObject({ state: "closed" });
    await ledger.run(req, s.send, s.ref).catch(() => {});
    expect(s.calls.map((c) => c.bytes)).toEqual([body, body]);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { hashKey, IdempotencyConflictError, type Ledger } from "../../src/ledger/open-ledger.js";
import { API_KEY, BODY, fastLedger, OTHER_KEY, STORE, scriptedSend, serviceError } from "./ledger-helpers.js";
import { available, freshStore, type StoreFixture } from "./stores.js";

const keyHash = hashKey(API_KEY);
const req = { keyHash, tool: "generate_image", endpoint: "/api/generate/image", bytes: BODY };
const _IDENTITY = /^[a-zA-Z0-9_.:-]{1,128}$/;

let t: StoreFixture;
let ledger: Ledger;
let opened = false;
beforeEach(async (ctx) => {
  if (!(await available(STORE))) return ctx.skip();
  t = await freshStore(STORE);
  ledger = await fastLedger(t.uri);
  opened = true;
});
afterEach(async () => {
  if (!opened) return;
  opened = false;
  await ledger.close();
  await t.cleanup();
});

describe("run: reuse and explicit keys", () => {
  it("reuses a success that never reached the client, and not one that did", async () => {
    const s = scriptedSend([{ taskId: "t6" }]);
    const a = await ledger.run(req, s.send, s.ref);
    const b = await ledger.run(req, s.send, s.ref);
    expect(b).toMatchObject({ identity: a.identity, reused: true });
    await ledger.markDelivered(keyHash, a.identity, true);
    expect((await ledger.list(keyHash))[0]).toMatchObject({ delivered: true, state: "succeeded" });
    const c = await ledger.run(req, s.send, s.ref);
    expect(c.reused).toBe(false);
    expect(c.identity).not.toBe(a.identity);
    expect(s.calls.map((x) => x.identity)).toEqual([a.identity, a.identity, c.identity]);
  });

  it("a delivery taken back (the result never arrived) makes the success reusable again", async () => {
    const s = scriptedSend([{ taskId: "t6" }]);
    const a = await ledger.run(req, s.send, s.ref);
    await ledger.markDelivered(keyHash, a.identity, true);
    await ledger.markDelivered(keyHash, a.identity, true);
    expect((await ledger.list(keyHash))[0]?.expiresAt).toBeDefined();
    await ledger.markDelivered(keyHash, a.identity, false);
    const [rec] = await ledger.list(keyHash);
    expect(rec).toMatchObject({ delivered: false, state: "succeeded" });
    expect(rec?.expiresAt).toBeUndefined();
    expect(await ledger.run(req, s.send, s.ref)).toMatchObject({ identity: a.identity, reused: true });
    await ledger.markDelivered(keyHash, "no-such-identity", true);
  });

  it("replays an explicit idempotencyKey with the same body, refuses a different body and sends nothing", async () => {
    const s = scriptedSend([{ taskId: "t7" }]);
    const a = await ledger.run({ ...req, idempotencyKey: "my-key.1" }, s.send, s.ref);
    expect(a).toMatchObject({ identity: "my-key.1", reused: false });
    await ledger.markDelivered(keyHash, "my-key.1", true);
    const b = await ledger.run({ ...req, idempotencyKey: "my-key.1" }, s.send, s.ref);
    expect(b).toMatchObject({ identity: "my-key.1", reused: true });
    expect(s.calls).toHaveLength(2);
    const err = await ledger
      .run({ ...req, bytes: BODY.replace("dusk", "dawn"), idempotencyKey: "my-key.1" }, s.send, s.ref)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdempotencyConflictError);
    expect(err).toMatchObject({
      code: "IDEMPOTENCY_CONFLICT",
      field: "idempotencyKey",
      identity: "my-key.1",
    });
    const other = await ledger
      .run({ ...req, tool: "generate_video", idempotencyKey: "my-key.1" }, s.send, s.ref)
      .catch((e: unknown) => e);
    expect(other).toMatchObject({ code: "IDEMPOTENCY_CONFLICT" });
    expect(s.calls).toHaveLength(2);
  });

  it("an explicit key does not hide an open implicit record from identical calls", async () => {
    const lost = scriptedSend([serviceError(503, "TEMPORARILY_UNAVAILABLE")]);
    const err = await ledger.run({ ...req, maxAttempts: 1 }, lost.send, lost.ref).catch((e: unknown) => e);
    const open = (err as { identity: string }).identity;
    const s = scriptedSend([{ taskId: "t" }]);
    await ledger.run({ ...req, idempotencyKey: "chosen" }, s.send, s.ref);
    const again = await ledger.run(req, s.send, s.ref);
    expect(again).toMatchObject({ identity: open, reused: true });
  });

  it("asserts an idempotencyKey the edge should have refused, before claiming anything", async () => {
    const s = scriptedSend([{ taskId: "t8" }]);
    await expect(ledger.run({ ...req, idempotencyKey: "has space" }, s.send, s.ref)).rejects.toMatchObject({
      code: "ERR_ASSERTION",
    });
    expect(s.calls).toHaveLength(0);
    expect(await ledger.list(keyHash)).toEqual([]);
  });

  it("merges 50 concurrent identical calls into one dispatch", async () => {
    let sends = 0;
    const send = async (identity: string) => {
      sends++;
      await new Promise((r) => setTimeout(r, 20));
      return { taskId: `t-${identity}` };
    };
    const outs = await Promise.all(
      Array.from({ length: 50 }, () => ledger.run(req, send, (r) => ({ taskId: r.taskId }))),
    );
    expect(sends).toBe(1);
    expect(new Set(outs.map((o) => o.identity)).size).toBe(1);
    expect(outs.filter((o) => !o.reused)).toHaveLength(1);
    expect(await ledger.list(keyHash)).toHaveLength(1);
  });

  it("lets a waiting identical call abort alone, and resume when the first caller aborts", async () => {
    const sends: string[] = [];
    const send = (identity: string, _bytes: string, signal?: AbortSignal) =>
      new Promise<{ taskId: string }>((res, rej) => {
        sends.push(identity);
        const timer = setTimeout(() => res({ taskId: identity }), 60);
        signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          rej(signal.reason);
        });
      });
    const ref = (r: { taskId: string }) => r;
    const leaderAbort = new AbortController();
    const joinerAbort = new AbortController();
    const leader = ledger.run({ ...req, signal: leaderAbort.signal }, send, ref);
    const quitter = ledger.run({ ...req, signal: joinerAbort.signal }, send, ref);
    const patient = ledger.run(req, send, ref);
    joinerAbort.abort(new Error("joiner cancelled"));
    await expect(quitter).rejects.toThrow("joiner cancelled");
    await vi.waitFor(() => expect(sends).toHaveLength(1));
    leaderAbort.abort(new Error("leader cancelled"));
    const led = await leader.catch((e: unknown) => e);
    expect(led).toMatchObject({ message: "leader cancelled" });
    const out = await patient;
    expect(out.identity).toBe((led as { identity: string }).identity);
    expect(sends).toEqual([out.identity, out.identity]);
    expect((await ledger.list(keyHash))[0]).toMatchObject({ state: "succeeded", attempts: 2 });
  });

  it("keeps one key's records invisible under another", async () => {
    const s = scriptedSend([{ taskId: "t9" }]);
    const mine = await ledger.run(req, s.send, s.ref);
    const otherHash = hashKey(OTHER_KEY);
    expect(await ledger.list(otherHash)).toEqual([]);
    const theirs = await ledger.run({ ...req, keyHash: otherHash }, s.send, s.ref);
    expect(theirs.reused).toBe(false);
    expect(theirs.identity).not.toBe(mine.identity);
    expect((await ledger.list(keyHash)).map((r) => r.idempotencyKey)).toEqual([mine.identity]);
    expect((await ledger.list(otherHash)).map((r) => r.idempotencyKey)).toEqual([theirs.identity]);
    // The same explicit key under two API keys is two separate requests.
    await ledger.run({ ...req, idempotencyKey: "shared" }, s.send, s.ref);
    const b = await ledger.run(
      { ...req, keyHash: otherHash, bytes: "{}", idempotencyKey: "shared" },
      s.send,
      s.ref,
    );
    expect(b.reused).toBe(false);
  });

  it("lists newest first and filters by state", async () => {
    let now = 1_700_000_000_000;
    const clocked = await fastLedger(t.uri, { now: () => now });
    const s = scriptedSend([{ taskId: "a" }]);
    const first = await clocked.run(req, s.send, s.ref);
    now += 1000;
    const f = scriptedSend([serviceError(409, "REQUEST_FAILED")]);
    await clocked.run({ ...req, bytes: "{}" }, f.send, f.ref).catch(() => {});
    const all = await clocked.list(keyHash);
    expect(all.map((r) => r.state)).toEqual(["closed", "succeeded"]);
    expect(all[1]?.createdAt).toBe(new Date(1_700_000_000_000).toISOString());
    expect((await clocked.list(keyHash, { state: "succeeded" })).map((r) => r.idempotencyKey)).toEqual([
      first.identity,
    ]);
    await clocked.close();
  });
});

/**
 * The engine cache is bounded: made-up keys presented over HTTP cannot grow it forever. Every use
 * counts as recent, a token check by hash (`kept`) as much as a request's key (`forKey`), so the
 * engine dropped is the one used least recently, never merely the one made first; and a request
 * holds the engine it was given, so a drop cannot fail it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { createEngines, ENGINE_BYTES, type Engines, MAX_ENGINE_BYTES } from "../../src/transports/engine.js";

const dir = mkdtempSync(join(tmpdir(), "generation-mcp-engine-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const key = (i: number) => `lgk_${i.toString(16).padStart(64, "0")}`;
const config = () =>
  loadConfig(["--sandbox"], {
    GENERATION_STORE: `sqlite://${join(dir, "ledger.sqlite")}`,
    GENERATION_FILES: dir,
  });

let engines: Engines;
afterEach(() => engines.close());

describe("engine cache", () => {
  const KEPT = 20;
  beforeEach(async () => {
    engines = await createEngines(config(), { maxEngineBytes: KEPT * ENGINE_BYTES });
  });

  it("keeps engines up to a memory bound, dropping the least recently used", () => {
    const real = engines.forKey(key(0));
    const first = engines.forKey(key(1));
    for (let i = 2; i < 5 * KEPT; i++) {
      engines.forKey(key(i));
      // The real key keeps being used, so it is never the least recently used.
      if (i % 5 === 0) expect(engines.forKey(key(0))).toBe(real);
    }
    expect(engines.forKey(key(0))).toBe(real);
    expect(engines.kept(real.keyHash)).toBe(real);
    expect(engines.kept(first.keyHash)).toBeUndefined();
    expect(engines.forKey(key(1))).not.toBe(first);
    // The last KEPT - 1 made are all still kept, beside the real key.
    for (let i = 5 * KEPT - (KEPT - 1); i < 5 * KEPT; i++)
      expect(engines.kept(engines.forKey(key(i)).keyHash)).toBeDefined();
  });

  it("counts what an engine's client learnt: one remembering many assets takes the room of several", () => {
    const made = Array.from({ length: KEPT }, (_, i) => engines.forKey(key(i)));
    const big = made[KEPT - 1] as (typeof made)[number];
    // About five engines' worth of asset kinds (100 bytes each), counted again on its next use.
    for (let a = 0; a < (5 * ENGINE_BYTES) / 100; a++)
      big.client.assets.note(`asset-${a}`, "image", { from: "upload" });
    expect(engines.kept(big.keyHash)).toBe(big);
    const left = made.filter((e) => engines.kept(e.keyHash) !== undefined);
    expect(left.length).toBeLessThanOrEqual(KEPT - 5);
    expect(left).toContain(big);
  });

  it("keeps an engine for each of thousands of users by default", async () => {
    await engines.close();
    engines = await createEngines(config());
    expect(MAX_ENGINE_BYTES / ENGINE_BYTES).toBeGreaterThanOrEqual(10_000);
    const made = Array.from({ length: 5_000 }, (_, i) => engines.forKey(key(i)));
    expect(made.every((e) => engines.kept(e.keyHash) === e)).toBe(true);
  });
});

describe("engine cache recency", () => {
  const BOUND = 4;
  beforeEach(async () => {
    engines = await createEngines(config(), { maxEngines: BOUND });
  });

  it("counts a lookup by hash as a use: the engine a token check keeps finding stays", () => {
    const oldest = engines.forKey(key(0));
    for (let i = 1; i < 10 * BOUND; i++) {
      engines.forKey(key(i));
      // A signed-in user's token, checked on each of their requests, finds their engine by hash.
      expect(engines.kept(oldest.keyHash)).toBe(oldest);
    }
  });

  it("drops the least recently used, not the first made", () => {
    const made = [0, 1, 2, 3].map((i) => engines.forKey(key(i)));
    // Used in the order 2, 0, 3, 1: key 2 is now the least recently used.
    for (const i of [2, 0, 3, 1]) engines.kept(made[i]?.keyHash ?? "");
    engines.forKey(key(9));
    expect(engines.kept(made[2]?.keyHash ?? "")).toBeUndefined();
    for (const i of [0, 1, 3]) expect(engines.kept(made[i]?.keyHash ?? "")).toBe(made[i]);
  });

  it("leaves an engine already given out usable after it is dropped", async () => {
    const held = engines.forKey(key(0));
    for (let i = 1; i <= BOUND; i++) engines.forKey(key(i));
    expect(engines.kept(held.keyHash)).toBeUndefined();
    // The request that was given it still runs under it: its ledger and client work.
    expect(await held.ledger.list(held.keyHash)).toEqual([]);
    expect(held.client.scrub(key(0))).not.toContain(key(0).slice(4));
  });
});

describe("a key the service refuses", () => {
  it("is taken as refused once the service says so, and no longer once it accepts it again", async () => {
    const { createSandbox } = await import("../../src/sandbox/sandbox.js");
    const sandbox = createSandbox({ timeScale: 50 });
    const service = await sandbox.listen();
    try {
      const key = sandbox.addKey({ scopes: ["read", "generate"] });
      engines = await createEngines(
        loadConfig(["--transport", "http"], {
          GENERATION_BASE_URL: service.url,
          GENERATION_STORE: `sqlite://${join(dir, "refusals.sqlite")}`,
          GENERATION_FILES: dir,
        }),
      );
      const engine = engines.forKey(key);
      expect(engine.key).toMatchObject({ origin: "header", refused: false });
      sandbox.faults.inject("GET /api/generate/models", { status: 401, code: "INVALID_API_KEY" }, 1);
      expect(await engines.checkKey(key)).toEqual({ ok: false, code: "INVALID_API_KEY" });
      expect(engine.key.refused).toBe(true);
      // The same key accepted again (a sign-in with it checks it first): paid calls are allowed again.
      expect(await engines.checkKey(key)).toEqual({ ok: true });
      expect(engine.key.refused).toBe(false);
    } finally {
      await service.close();
      await sandbox.close();
    }
  });
});

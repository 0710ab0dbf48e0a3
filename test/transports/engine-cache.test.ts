/**
 * The engine cache is bounded: made-up keys presented over HTTP cannot grow it forever, and a key
 * in use stays cached.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { createEngines, MAX_CACHED_ENGINES } from "../../src/transports/engine.js";

const dir = mkdtempSync(join(tmpdir(), "generation-mcp-engine-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const key = (i: number) => `lgk_${i.toString(16).padStart(64, "0")}`;

describe("engine cache", () => {
  it("keeps at most MAX_CACHED_ENGINES engines, dropping the least recently used", async () => {
    const config = loadConfig(["--sandbox"], {
      GENERATION_STORE: `sqlite://${join(dir, "ledger.sqlite")}`,
      GENERATION_FILES: dir,
    });
    const engines = await createEngines(config);
    try {
      const real = engines.forKey(key(0));
      const first = engines.forKey(key(1));
      for (let i = 2; i < 5 * MAX_CACHED_ENGINES; i++) {
        engines.forKey(key(i));
        // The real key keeps being used, so it is never the least recently used.
        if (i % 50 === 0) expect(engines.forKey(key(0))).toBe(real);
      }
      expect(engines.forKey(key(0))).toBe(real);
      expect(engines.byHash(real.keyHash)).toBe(real);
      expect(() => engines.byHash(first.keyHash)).toThrow(/no engine/);
      expect(engines.forKey(key(1))).not.toBe(first);
    } finally {
      await engines.close();
    }
  });
});

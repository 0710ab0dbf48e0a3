import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { waitForTask } from "../../src/client/poll.js";
import { loadConfig } from "../../src/config/index.js";
import { hashKey } from "../../src/ledger/open-ledger.js";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { createEngines, EMBEDDED_SANDBOX_KEY } from "../../src/transports/engine.js";

const dir = mkdtempSync(join(tmpdir(), "generation-mcp-engine-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sandboxConfig(name: string) {
  return loadConfig(["--sandbox"], {
    GENERATION_STORE: `sqlite://${join(dir, name, "ledger.sqlite")}`,
    GENERATION_FILES: dir,
  });
}

describe("createEngines", () => {
  it("spells the sandbox key as the sandbox does", () => {
    expect(EMBEDDED_SANDBOX_KEY).toBe(SANDBOX_API_KEY);
  });

  it("uses the embedded sandbox with its own key", async () => {
    const engines = await createEngines(sandboxConfig("a"));
    try {
      expect(engines.defaultApiKey).toBe(SANDBOX_API_KEY);
      const engine = engines.forKey(SANDBOX_API_KEY);
      expect(engine.keyHash).toBe(hashKey(SANDBOX_API_KEY));
      const models = await engine.client.listModels();
      expect(models.models.length).toBeGreaterThan(0);
    } finally {
      await engines.close();
    }
  });

  it("gives signed output URLs a user can open, at the loopback origin known from the start", async () => {
    const engines = await createEngines(sandboxConfig("u"));
    try {
      // Bound before any request, so the viewer's CSP can name it in resources/list already.
      expect(engines.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const { client } = engines.forKey(SANDBOX_API_KEY);
      const body = JSON.stringify({ model: "sandbox-image-fast", prompt: "a kite", parameters: {} });
      const { submission } = await client.submitMedia("image", body, "engine-url-1");
      // Read every 100 ms rather than on the service's 2 s guidance: this test is about the URL, and
      // the embedded sandbox runs in real time (an image takes 3 s).
      const every100ms = { dueMs: (n: number, last?: number) => (n === 0 ? 0 : (last ?? 0) + 100) };
      const schedule = { ...every100ms, earliestMs: (_n: number, last?: number) => last ?? 0 };
      const { task } = await waitForTask((signal) => client.getTask(submission.task.id, { signal }), {
        waitSeconds: 20,
        schedule,
      });
      const url = task.outputs[0]?.asset?.url ?? "";
      expect(url.startsWith(`${engines.baseUrl}/sandbox/files/`)).toBe(true);
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
    } finally {
      await engines.close();
    }
  });

  it("keeps one engine per key and one ledger for all", async () => {
    const engines = await createEngines(sandboxConfig("b"));
    try {
      const other = `lgk_${"1".repeat(64)}`;
      const a = engines.forKey(SANDBOX_API_KEY);
      const b = engines.forKey(other);
      expect(engines.forKey(SANDBOX_API_KEY)).toBe(a);
      expect(b).not.toBe(a);
      expect(b.keyHash).not.toBe(a.keyHash);
      expect(b.ledger).toBe(a.ledger);
      expect(engines.kept(b.keyHash)).toBe(b);
      expect(engines.kept("unknown")).toBeUndefined();
    } finally {
      await engines.close();
    }
  });

  it("opens the ledger on first use, not at startup", async () => {
    const engines = await createEngines(sandboxConfig("c"));
    try {
      const file = join(dir, "c", "ledger.sqlite");
      expect(existsSync(file)).toBe(false);
      const engine = engines.forKey(SANDBOX_API_KEY);
      expect(await engine.ledger.list(engine.keyHash)).toEqual([]);
      expect(existsSync(file)).toBe(true);
    } finally {
      await engines.close();
    }
  });

  it("opens the ledger on warmUp", async () => {
    const engines = await createEngines(sandboxConfig("w"));
    try {
      await engines.warmUp();
      expect(existsSync(join(dir, "w", "ledger.sqlite"))).toBe(true);
    } finally {
      await engines.close();
    }
  });

  it("refuses a malformed key without echoing it", async () => {
    const engines = await createEngines(sandboxConfig("d"));
    try {
      expect(() => engines.forKey("lgk_not-a-key")).toThrow();
      try {
        engines.forKey("lgk_not-a-key");
      } catch (error) {
        expect(String(error)).not.toContain("not-a-key");
      }
    } finally {
      await engines.close();
    }
  });
});

/**
 * The embedded sandbox's journal (src/sandbox/journal.ts): a sandbox started again on the same
 * journal finds the tasks, assets and voices made before, under the same IDs, and a replay under
 * the same Idempotency-Key dispatches nothing new; a second live sandbox leaves the journal alone;
 * the key is never written to it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { renderImage } from "../../src/sandbox/media/png.js";
import { createSandbox, SANDBOX_API_KEY, type Sandbox } from "../../src/sandbox/sandbox.js";
import { tempDir } from "../helpers/temp.js";

const temp = tempDir("gen-mcp-journal-");
afterAll(() => temp.cleanup());

const BASE = "http://sandbox.test";
const auth = { authorization: `Bearer ${SANDBOX_API_KEY}` };

function submit(s: Sandbox, prompt: string, idem: string): Promise<Response> {
  return s.fetch(
    new Request(`${BASE}/api/generate/image`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "idempotency-key": idem },
      body: JSON.stringify({ model: "sandbox-image-fast", prompt }),
    }),
  );
}

const readTask = (s: Sandbox, id: string) =>
  s.fetch(new Request(`${BASE}/api/generate/tasks/${id}`, { headers: auth }));

describe("the sandbox's journal", () => {
  it("keeps tasks and assets across a restart, and a replayed submission dispatches nothing new", async () => {
    const journal = join(temp.dir, "a.jsonl");
    const first = createSandbox({ journal });
    const made = (await (await submit(first, "a kite", "idem-1")).json()) as { task: { id: string } };
    const up = await first.fetch(
      new Request(`${BASE}/api/generate/assets`, {
        method: "POST",
        headers: { ...auth, "content-type": "image/png", "x-filename": "fox.png" },
        body: new Uint8Array(renderImage("fox", "1:1")),
      }),
    );
    expect(up.status).toBe(201);
    const asset = ((await up.json()) as { asset: { id: string } }).asset;
    await first.close();

    const second = createSandbox({ journal });
    second.advance(60_000);
    const read = await readTask(second, made.task.id);
    expect(read.status).toBe(200);
    expect(((await read.json()) as { task: { status: string } }).task.status).toBe("succeeded");
    const again = await submit(second, "a kite", "idem-1");
    expect(((await again.json()) as { task: { id: string } }).task.id).toBe(made.task.id);
    expect(second.stats.dispatches()).toBe(0);
    // The asset uploaded before the restart is still this key's: a reference to it is taken.
    const withRef = await second.fetch(
      new Request(`${BASE}/api/generate/image`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json", "idempotency-key": "idem-2" },
        body: JSON.stringify({ model: "sandbox-image-pro", prompt: "a fox", referenceAssetIds: [asset.id] }),
      }),
    );
    expect(withRef.status).toBe(202);
    await second.close();
    expect(readFileSync(journal, "utf8")).not.toContain(SANDBOX_API_KEY);
    expect(readFileSync(journal, "utf8")).not.toContain(SANDBOX_API_KEY.slice(4));
  });

  it("is left alone by a second sandbox while the first lives", async () => {
    const journal = join(temp.dir, "b.jsonl");
    const notes: string[] = [];
    const first = createSandbox({ journal });
    const second = createSandbox({ journal, onJournal: (n) => notes.push(n) });
    expect(notes).toEqual([expect.stringMatching(/keeps no journal: another sandbox \(pid \d+\)/)]);
    await submit(second, "not kept", "idem-3");
    await first.close();
    await second.close();
    const third = createSandbox({ journal });
    expect(third.stats.requests()).toBe(0);
    await third.close();
    expect(readFileSync(journal, "utf8")).not.toContain("not kept");
  });
});

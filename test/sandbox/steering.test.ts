import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshIdem, type Harness, startSandbox } from "./sandbox-helpers.js";

let h: Harness;
beforeAll(async () => {
  h = await startSandbox();
});
afterAll(() => h.close());

const img = (prompt: string) => ({ model: "sandbox-image-fast", prompt });

describe("steering a sandbox in another process", () => {
  it("POST /sandbox/keys makes keys that work with the scopes asked; only the public key may ask", async () => {
    const made = await h.post("/sandbox/keys", { count: 3, scopes: ["read"] });
    expect(made.status).toBe(201);
    const { keys } = (await made.json()) as { keys: string[] };
    expect(new Set(keys).size).toBe(3);
    for (const key of keys) expect((await h.call("/api/generate/models", { key })).status).toBe(200);
    const [reader = ""] = keys;
    expect(
      (await h.post("/api/generate/image", img("no scope"), { key: reader, idem: freshIdem() })).status,
    ).toBe(403);
    expect((await h.post("/sandbox/keys", { count: 1 }, { key: reader })).status).toBe(403);
    expect((await h.post("/sandbox/keys", { count: 0 })).status).toBe(422);
  });

  it("GET /sandbox/tasks lists every key's tasks with their prompts; a replay adds none", async () => {
    const { keys } = (await (await h.post("/sandbox/keys", { count: 2 })).json()) as { keys: string[] };
    const [a = "", b = ""] = keys;
    const idem = freshIdem();
    for (let i = 0; i < 2; i++) await h.post("/api/generate/image", img("steer a"), { key: a, idem });
    await h.post("/api/generate/image", img("steer b"), { key: b, idem: freshIdem() });
    const listed = (await (await h.call("/sandbox/tasks")).json()) as {
      tasks: Array<{ id: string; owner: string; prompt: string }>;
    };
    const mine = listed.tasks.filter((t) => t.prompt.startsWith("steer "));
    expect(mine.map((t) => t.prompt).sort()).toEqual(["steer a", "steer b"]);
    expect(new Set(mine.map((t) => t.owner)).size).toBe(2);
    expect((await h.call("/sandbox/tasks", { key: a })).status).toBe(403);
  });
});

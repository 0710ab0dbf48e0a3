/**
 * Bounds the client itself enforces at its edge: the limit passes (and reaches the
 * service), one past it is refused with the field and the limit, and msw saw no request.
 */
import { mkdirSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inspect } from "node:util";
import { HttpResponse, http } from "msw";
import { afterAll, describe, expect, it } from "vitest";
import { buildMediaBody } from "../../src/client/requests.js";
import { ServiceClient } from "../../src/client/service-client.js";
import { ArgumentError } from "../../src/shared/local-refusals.js";
import { BASE, client, KEY, MAGIC, mockService, task, tempDir } from "./client-helpers.js";

const { server, seen } = mockService();
const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** A sparse file of `size` bytes that starts with `head` (type sniffing reads only the head). */
function sized(name: string, head: Buffer, size: number): string {
  const path = join(tmp.dir, name);
  writeFileSync(path, head);
  truncateSync(path, size);
  return path;
}

async function refusedAsync(p: Promise<unknown>, field: string, limit?: RegExp): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected ${field} to be refused`).toBeInstanceOf(ArgumentError);
  expect((err as ArgumentError).field).toBe(field);
  if (limit) expect((err as ArgumentError).message).toMatch(limit);
  expect(seen, "nothing may reach the service").toHaveLength(0);
}

describe("the API key and identities", () => {
  it("the key must be lgk_ and 64 lowercase hex digits; the error never repeats it", () => {
    for (const bad of [`lgk_${"A".repeat(64)}`, `lgk_${"a".repeat(63)}`, `sk_${"a".repeat(64)}`, ""]) {
      let err: unknown;
      try {
        new ServiceClient({ baseUrl: BASE, apiKey: bad });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ArgumentError);
      expect((err as ArgumentError).field).toBe("apiKey");
      if (bad) expect((err as Error).message).not.toContain(bad);
    }
    expect(() => new ServiceClient({ baseUrl: BASE, apiKey: KEY })).not.toThrow();
  });

  it("the key does not show when the client is inspected, serialised or logged", () => {
    const c = new ServiceClient({ baseUrl: BASE, apiKey: KEY });
    expect(inspect(c, { depth: 10, showHidden: true })).not.toContain(KEY);
    expect(JSON.stringify(c)).not.toContain(KEY);
    expect(String(c)).not.toContain(KEY);
  });

  it("Idempotency-Key: an identity of 128 characters of the pattern is sent as is", async () => {
    // Keys are checked once, at the tool's edge (test/tools/generate.test.ts); the client sends
    // the identity the ledger gives it.
    server.use(
      http.post(`${BASE}/api/generate/image`, () =>
        HttpResponse.json({ task: task(), created: true }, { status: 202 }),
      ),
    );
    const { bytes } = buildMediaBody("image", { model: "m", prompt: "p" });
    const ok = "aZ09_.:-".repeat(16);
    await client().submitMedia("image", bytes, ok);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers["idempotency-key"]).toBe(ok);
    seen.length = 0;
  });

  it("a task ID must be given", async () => {
    await refusedAsync(client().getTask(""), "taskId");
  });

  it("a task ID cannot steer the path: dot segments, separators and oversized IDs are refused", async () => {
    // `..` and `.` pass encodeURIComponent untouched, and URL parsing would turn
    // /api/generate/tasks/.. into /api/generate/: an authenticated request to another route.
    for (const bad of ["..", ".", "a/b", "../models", "a\\b", "t\n1"]) {
      await refusedAsync(client().getTask(bad), "taskId");
      await refusedAsync(client().headTask(bad), "taskId");
    }
    await refusedAsync(client().getTask("x".repeat(257)), "taskId", /256/);
    server.use(http.get(`${BASE}/api/generate/tasks/:id`, () => HttpResponse.json({ task: task() })));
    await client().getTask("x".repeat(256));
    await client().getTask("..a");
    expect(seen.map((r) => new URL(r.url).pathname)).toEqual([
      `/api/generate/tasks/${"x".repeat(256)}`,
      "/api/generate/tasks/..a",
    ]);
  });
});

describe("voice list query", () => {
  it("page 1 to 10,000 and scope mine or explore", async () => {
    server.use(http.get(`${BASE}/api/generate/voices`, () => HttpResponse.json({ voices: [] })));
    await client().listVoices({ page: 1 });
    await client().listVoices({ page: 10_000, scope: "mine" });
    expect(seen).toHaveLength(2);
    seen.length = 0;
    await refusedAsync(client().listVoices({ page: 0 }), "page", /1/);
    await refusedAsync(client().listVoices({ page: 10_001 }), "page", /at most 10,000/);
    await refusedAsync(client().listVoices({ scope: "all" as "mine" }), "scope");
  });
});

describe("asset upload", () => {
  it("31,457,280 bytes are sent whole; 31,457,281 are refused before sending", async () => {
    let received = 0;
    server.use(
      http.post(`${BASE}/api/generate/assets`, async ({ request }) => {
        received = (await request.arrayBuffer()).byteLength;
        return HttpResponse.json(
          { asset: { id: "a1", kind: "image", state: "ready", url: null } },
          { status: 201 },
        );
      }),
    );
    await client().uploadAsset({ path: sized("at-limit.png", MAGIC.png, 31_457_280) });
    expect(received).toBe(31_457_280);
    expect(seen[0]?.headers["content-length"]).toBe("31457280");
    seen.length = 0;
    await refusedAsync(
      client().uploadAsset({ path: sized("past.png", MAGIC.png, 31_457_281) }),
      "path",
      /must be at most 30 MiB; the file has 30\.0 MiB \(31,457,281 bytes\)/,
    );
    await refusedAsync(
      client().uploadAsset({ data: new Uint8Array(31_457_281) }),
      "data",
      /must be at most 30 MiB; got 30\.0 MiB \(31,457,281 bytes\)/,
    );
  });

  it("refuses empty files, non-media bytes, directories and missing files", async () => {
    await refusedAsync(
      client().uploadAsset({ path: sized("empty.png", Buffer.alloc(0), 0) }),
      "path",
      /empty/,
    );
    await refusedAsync(
      client().uploadAsset({ path: sized("doc.png", MAGIC.pdf, 100) }),
      "path",
      /image, video or audio.*application\/pdf/,
    );
    await refusedAsync(
      client().uploadAsset({ data: new Uint8Array([1, 2, 3, 4]) }),
      "data",
      /not recognised/,
    );
    const dir = join(tmp.dir, "folder");
    mkdirSync(dir);
    await refusedAsync(client().uploadAsset({ path: dir }), "path", /regular file/);
    await refusedAsync(client().uploadAsset({ path: join(tmp.dir, "missing.png") }), "path", /ENOENT/);
  });
});

describe("voice upload", () => {
  const voiceOk = () =>
    server.use(
      http.post(`${BASE}/api/generate/voices`, async ({ request }) => {
        await request.arrayBuffer();
        return HttpResponse.json({ voice: { id: "v1", name: "v" } }, { status: 201 });
      }),
    );

  it("1 byte to 50 MiB: the limit is sent, one past it and empty files are refused", async () => {
    voiceOk();
    await client().uploadVoice({
      path: sized("max.wav", MAGIC.wav, 52_428_800),
      duration: 20,
      rightsConfirmed: true,
    });
    expect(seen).toHaveLength(1);
    seen.length = 0;
    await refusedAsync(
      client().uploadVoice({
        path: sized("big.wav", MAGIC.wav, 52_428_801),
        duration: 20,
        rightsConfirmed: true,
      }),
      "path",
      /must be at most 50 MiB; the file has 50.0 MiB/,
    );
    await refusedAsync(
      client().uploadVoice({
        path: sized("none.wav", Buffer.alloc(0), 0),
        duration: 20,
        rightsConfirmed: true,
      }),
      "path",
      /1 byte/,
    );
  });

  it("duration 15 to 300 seconds", async () => {
    voiceOk();
    const path = sized("d.wav", MAGIC.wav, 1000);
    await client().uploadVoice({ path, duration: 15, rightsConfirmed: true });
    await client().uploadVoice({ path, duration: 300, rightsConfirmed: true });
    expect(seen).toHaveLength(2);
    seen.length = 0;
    for (const d of [14.99, 300.01, Number.NaN]) {
      await refusedAsync(
        client().uploadVoice({ path, duration: d, rightsConfirmed: true }),
        "duration",
        /15 and 300/,
      );
    }
  });

  it("rightsConfirmed must be literally true", async () => {
    const path = sized("r.wav", MAGIC.wav, 1000);
    await refusedAsync(
      client().uploadVoice({ path, duration: 20, rightsConfirmed: false as true }),
      "rightsConfirmed",
      /permission/,
    );
  });

  it("MP3, WAV and FLAC by their bytes pass; an image is refused whatever its name", async () => {
    voiceOk();
    for (const [name, head] of [
      ["a.mp3", MAGIC.mp3],
      ["a.wav", MAGIC.wav],
      ["a.flac", MAGIC.flac],
    ] as const) {
      await client().uploadVoice({ path: sized(name, head, 2000), duration: 20, rightsConfirmed: true });
    }
    expect(seen).toHaveLength(3);
    seen.length = 0;
    await refusedAsync(
      client().uploadVoice({ path: sized("fake.mp3", MAGIC.png, 2000), duration: 20, rightsConfirmed: true }),
      "path",
      /MP3, WAV, OGG, M4A, AAC, FLAC or WebM/,
    );
  });
});

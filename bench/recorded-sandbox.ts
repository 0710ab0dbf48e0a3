/**
 * What the polling benchmarks (bench/polling.ts, and the tasks part of `npm run bench`,
 * bench/tasks.ts) share: the sandbox behind a thin recorder that notes when each submission arrived
 * (the task's creation, on the sandbox clock at timeScale 1) and counts each task's reads, and the
 * three kinds measured. Sandbox durations are fixed (src/sandbox/rules-visual.ts, rules-audio.ts):
 * image 3 s, speech 4 s, video 10 s, so the moment a task turns terminal is known to the millisecond.
 */
import { createSandbox } from "../src/sandbox/sandbox.js";
import { listenHttp } from "../src/sandbox/sandbox-http.js";

export interface Kind {
  name: string;
  tool: string;
  durationMs: number;
  args: (i: number) => Record<string, unknown>;
}

export const KINDS: Kind[] = [
  {
    name: "image",
    tool: "generate_image",
    durationMs: 3000,
    args: (i) => ({ model: "sandbox-image-fast", prompt: `bench image ${i} ${Math.random()}` }),
  },
  {
    name: "audio",
    tool: "generate_audio",
    durationMs: 4000,
    args: (i) => ({
      model: "service-voice",
      operation: "speech",
      prompt: `Bench line ${i} ${Math.random()}`,
      parameters: { voiceProfileId: "voice_en_01" },
    }),
  },
  {
    name: "video",
    tool: "generate_video",
    durationMs: 10_000,
    args: (i) => ({
      model: "sandbox-video-lite",
      prompt: `bench clip ${i} ${Math.random()}`,
      parameters: { mode: "text-to-video", duration: 5 },
    }),
  },
];

export /** The sandbox behind a recorder: when each task was created, and how often it was read. */
async function recordedSandbox() {
  const sandbox = createSandbox({});
  const created = new Map<string, number>();
  const reads = new Map<string, number>();
  /** When each task was last read (the read that saw it finished, once it has). */
  const lastRead = new Map<string, number>();
  const server = await listenHttp(async (request) => {
    const path = new URL(request.url).pathname;
    const at = Date.now();
    const read = /^\/api\/generate\/tasks\/([^/]+)$/.exec(path);
    if (read?.[1] && request.method === "GET") {
      const id = decodeURIComponent(read[1]);
      reads.set(id, (reads.get(id) ?? 0) + 1);
      lastRead.set(id, at);
    }
    const response = await sandbox.fetch(request);
    if (request.method === "POST" && /^\/api\/generate\/(image|video|audio)$/.test(path)) {
      const body = (await response.clone().json()) as { task?: { id?: string } };
      if (body.task?.id && !created.has(body.task.id)) created.set(body.task.id, at);
    }
    return response;
  });
  return {
    url: server.url,
    created,
    reads,
    lastRead,
    close: () => server.close().then(() => sandbox.close()),
  };
}

export type Recorder = Awaited<ReturnType<typeof recordedSandbox>>;

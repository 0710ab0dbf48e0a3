/**
 * Learned polling through the tools: the first task of a model waits on the fixed schedule,
 * the ledger keeps what the wait saw, and the next task of that model is read nearer its
 * finish, with fewer reads, and progress that says the expected time.
 */
import { afterEach, expect, it } from "vitest";
import { fakeTimeEach } from "../helpers/fake-time.js";
import { type Harness, harness, structured } from "./harness.js";

const TASK_READS = "GET /api/generate/tasks/{id}";

let h: Harness;
// Fake time: the fixed schedule's reads at 2 and 6 s and the learned one's come in milliseconds.
fakeTimeEach();
afterEach(async () => {
  await h?.close();
});

async function generate(prompt: string, progress: string[]) {
  const before = h.sandbox.stats.requests(TASK_READS);
  const started = Date.now();
  const r = await h.call(
    "generate_image",
    { model: "sandbox-image-fast", prompt, wait: 20 },
    { onprogress: (p) => progress.push(p.message ?? "") },
  );
  const s = structured<{ task: { status: string } }>(r);
  expect(s.task.status).toBe("succeeded");
  return { reads: h.sandbox.stats.requests(TASK_READS) - before, ms: Date.now() - started };
}

it("learns this model's duration from the ledger and reads the next task sooner, with fewer reads", async () => {
  // timeScale 1: an image takes 3 s, which the fixed schedule sees at its third read, at 6 s.
  h = await harness({ timeScale: 1 });
  const fixed = await generate("a red fox", []);
  expect(fixed.reads).toBe(3);
  const [record] = await h.ledger.list(h.engine.keyHash);
  expect(record?.model).toBe("sandbox-image-fast");
  expect(await h.ledger.durations(h.engine.keyHash, "sandbox-image-fast")).toHaveLength(1);

  const progress: string[] = [];
  const learned = await generate("a blue heron", progress);
  expect(learned.reads).toBe(1);
  expect(learned.ms).toBeLessThan(fixed.ms - 500);
  expect(progress.join("\n")).toMatch(
    /; (about \d+ s left, from the last 1 run|expected about now, from the last 1 run|the last 1 run took about \d+ s)/,
  );

  // Another model has no history: the fixed schedule, and no expectation in the progress.
  const other: string[] = [];
  await h.call(
    "generate_image",
    { model: "sandbox-image-pro", prompt: "a heron", wait: 20 },
    { onprogress: (p) => other.push(p.message ?? "") },
  );
  expect(other.join("\n")).not.toMatch(/from the last/);
});

/**
 * (l) generate_batch in `npm run bench`: the wall time of a 10-item image batch against the same
 * 10 generate_image calls made one after another, each waiting until its task finishes, on the
 * built CLI over stdio against the sandbox in its own process (timeScale 1: an image takes seconds
 * there). Every run uses new prompts (new work, nothing replayed); the runs alternate. Goal: the
 * batch at most 0.3× the sequential calls (median of each).
 */
import { CLI, connectCli, isolatedEnv } from "../test/helpers/cli.js";
import { median, ms, print } from "./stats.js";

const RUNS = Number(process.env.BENCH_BATCH_RUNS ?? 3);
const ITEMS = 10;
const TARGET = 0.3;

const items = (tag: string) =>
  Array.from({ length: ITEMS }, (_, i) => ({ model: "sandbox-image-fast", prompt: `bench ${tag} ${i}` }));

export async function batchCost(serviceEnv: Record<string, string>): Promise<void> {
  const iso = isolatedEnv(serviceEnv);
  const { client } = await connectCli({ args: [CLI], env: { ...serviceEnv, ...iso.env } });
  const done = (r: Awaited<ReturnType<typeof client.callTool>>, what: string): void => {
    if (r.isError) throw new Error(`${what} failed: ${JSON.stringify(r).slice(0, 300)}`);
  };
  try {
    const batch: number[] = [];
    const sequential: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      let t = performance.now();
      const r = await client.callTool({
        name: "generate_batch",
        arguments: {
          items: items(`batch ${run}`).map((a) => ({ tool: "generate_image", arguments: a })),
          wait: 40,
        },
      });
      done(r, "generate_batch");
      const sc = r.structuredContent as { items: { task?: { status: string } }[] };
      if (!sc.items.every((i) => i.task?.status === "succeeded"))
        throw new Error("a batch item did not finish");
      batch.push(performance.now() - t);
      t = performance.now();
      for (const a of items(`one ${run}`)) {
        const one = await client.callTool({ name: "generate_image", arguments: { ...a, wait: 40 } });
        done(one, "generate_image");
      }
      sequential.push(performance.now() - t);
    }
    const ratio = median(batch) / median(sequential);
    print(
      `(l) generate_batch: ${ITEMS} images in one batch against ${ITEMS} sequential generate_image, ${RUNS} runs`,
    );
    print(
      `    batch median ${ms(median(batch))}; sequential median ${ms(median(sequential))}; ratio ${ratio.toFixed(2)}×`,
    );
    print(`    target: at most ${TARGET}×: ${ratio <= TARGET ? "met" : "NOT met"}`);
  } finally {
    await client.close();
    iso.cleanup();
  }
}

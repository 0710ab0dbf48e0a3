/**
 * Part (m) of `npm run bench` (bench/server.ts; `BENCH_PARTS=m` runs it alone): what approval
 * without a dialog costs (src/calls/paid/approval.ts, quote.ts). A client that declares no
 * elicitation calls generate_image over stdio on a server whose GENERATION_CONFIRM_ABOVE_GEMS is
 * below the estimate: the call is answered with a quote (nothing sent), and the same call resent
 * with `approval: <token>` is sent. The same call made plainly, on a server whose threshold is
 * above the estimate, is the floor. Both servers are the built CLI, each with its own ledger,
 * against the same sandbox; the two paths interleaved, every prompt new, so every call is new work.
 * Goal: the round trip (quote, then the approved call) at most 5 ms over the plain call, medians.
 * `BENCH_APPROVAL_CALLS` sets the count.
 */
import type { Client } from "@modelcontextprotocol/client";
import { CLI, connectCli, isolatedEnv } from "../test/helpers/cli.js";
import { median, ms, percentile, print, time } from "./stats.js";

const CALLS = Number(process.env.BENCH_APPROVAL_CALLS ?? 200);
const TARGET_MS = 5;
/** sandbox-image-pro at 4K with two outputs is estimated at 64 Gems (test/e2e/approval-cli.test.ts). */
const ESTIMATE = 64;

type Result = Awaited<ReturnType<Client["callTool"]>>;

async function connect(env: Record<string, string>): Promise<{ client: Client; close(): Promise<void> }> {
  const iso = isolatedEnv(env);
  // Declares no elicitation, as a host without a dialog.
  const { client } = await connectCli({ args: [CLI], env: iso.env, name: "bench-approval" });
  return {
    client,
    close: async () => {
      await client.close();
      iso.cleanup();
    },
  };
}

const sent = (r: Result, what: string): void => {
  const task = (r.structuredContent as { task?: { id?: string } } | undefined)?.task;
  if (r.isError || task?.id === undefined)
    throw new Error(`${what}: ${JSON.stringify(r.content).slice(0, 300)}`);
};

/** (m) the quote and the approved call, against the same call made plainly. */
export async function approvalCost(serviceEnv: Record<string, string>): Promise<void> {
  const service = {
    GENERATION_BASE_URL: serviceEnv.GENERATION_BASE_URL ?? "",
    GENERATION_API_KEY: serviceEnv.GENERATION_API_KEY ?? "",
  };
  const plain = await connect({ ...service, GENERATION_CONFIRM_ABOVE_GEMS: String(ESTIMATE * 10) });
  const quoted = await connect({ ...service, GENERATION_CONFIRM_ABOVE_GEMS: String(ESTIMATE / 2) });
  let n = 0;
  const args = (prompt: string) => ({
    model: "sandbox-image-pro",
    prompt,
    parameters: { resolution: "4K", outputCount: 2 },
    wait: 0,
  });
  const plainCall = async () =>
    sent(
      await plain.client.callTool({ name: "generate_image", arguments: args(`bench plain ${n++}`) }),
      "plain call",
    );
  const approvedCall = async (t: { quote: number[]; approved: number[] }) => {
    const a = args(`bench approved ${n++}`);
    let token: string | undefined;
    t.quote.push(
      await time(async () => {
        const q = await quoted.client.callTool({ name: "generate_image", arguments: a });
        token = (q.structuredContent as { approval?: { token?: string; gems?: number } } | undefined)
          ?.approval?.token;
      }),
    );
    if (token === undefined) throw new Error("the call above the threshold was not answered with a quote");
    const withToken = { ...a, approval: token };
    t.approved.push(
      await time(async () =>
        sent(await quoted.client.callTool({ name: "generate_image", arguments: withToken }), "approved call"),
      ),
    );
  };
  try {
    const warm = { quote: [] as number[], approved: [] as number[] };
    for (let i = 0; i < 30; i++) {
      await plainCall();
      await approvedCall(warm);
    }
    const t = { plain: [] as number[], quote: [] as number[], approved: [] as number[] };
    for (let i = 0; i < CALLS; i++) {
      t.plain.push(await time(plainCall));
      await approvedCall(t);
    }
    const pairs = t.quote.map((q, i) => q + (t.approved[i] ?? Number.NaN));
    const extra = median(pairs) - median(t.plain);
    print(
      `(m) approval without a dialog: generate_image (${ESTIMATE} Gems estimated, wait 0) over stdio, ${CALLS} each, interleaved`,
    );
    print(
      `    plain call (below the threshold): median ${ms(median(t.plain))}, p99 ${ms(percentile(t.plain, 99))}`,
    );
    print(
      `    quote: median ${ms(median(t.quote))}; approved call: median ${ms(median(t.approved))}, p99 ${ms(percentile(t.approved, 99))}; both: median ${ms(median(pairs))}`,
    );
    print(
      `    the approval round trip costs ${ms(extra)} over the plain call (the approved call alone ${ms(median(t.approved) - median(t.plain))}); target <= ${TARGET_MS} ms: ${extra <= TARGET_MS ? "met" : "NOT met"}`,
    );
  } finally {
    await Promise.all([plain.close(), quoted.close()]);
  }
}

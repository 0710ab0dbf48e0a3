import { z } from "zod";
import { RECORD_STATES } from "../ledger/record.js";
import { okResult } from "../tooling/results.js";
import { defineTool } from "../tooling/tool.js";

export default defineTool({
  name: "list_requests",
  title: "List this key's requests",
  description:
    "Lists the local ledger's records of this API key's submissions (generate_*, chat, extract_video): identity (idempotencyKey), tool, state, task ID, times. Use it to recover a task ID after a lost or cut-off answer, or to see which requests are uncertain (calling again with the same arguments replays them without a second charge). Reads only local state: no service call, no Gems.",
  inputSchema: z.strictObject({
    state: z
      .enum(RECORD_STATES as [string, ...string[]])
      .optional()
      .describe("Only records in this state: prepared, sent, uncertain, succeeded or closed."),
  }),
  outputSchema: z.object({
    requests: z
      .array(
        z.looseObject({
          idempotencyKey: z.string(),
          tool: z.string(),
          state: z.string(),
          taskId: z.string().optional(),
          createdAt: z.string(),
          updatedAt: z.string(),
        }),
      )
      .describe("Records, newest first, with identity, tool, state, taskId and ISO times."),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(args, _ctx, engine) {
    const records = await engine.ledger.list(engine.keyHash, args.state ? { state: args.state } : {});
    const requests = [...records].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    const lines = requests.map(
      (r) =>
        `- ${r.idempotencyKey} ${r.tool} ${r.state}${r.taskId ? ` task ${r.taskId}` : ""}${r.state === "succeeded" && !r.delivered ? " (result not delivered: the same call replays it)" : ""} ${r.updatedAt}`,
    );
    const note = engine.ledger.durabilityNote;
    const text = [
      ...(note === undefined ? [] : [`Warning: ${note}`]),
      `${requests.length} request${requests.length === 1 ? "" : "s"}${args.state ? ` in state ${args.state}` : ""}.`,
      ...lines,
      "Next: poll_task with a taskId to read a task; an uncertain request replays when called again with the same arguments.",
    ];
    return okResult(text.join("\n"), { requests });
  },
});

import { z } from "zod";
import { listCursor } from "../ledger/listing.js";
import { defineTool } from "../mcp/define-tool.js";
import { idempotencyKeyField } from "../mcp/fields.js";
import { requestLine, SHOWN_STATES, shownState, storedFilter } from "../mcp/request-view.js";
import { okResult } from "../mcp/results.js";

/** Small by default: hosts cap tool output, and a person looks for one lost request at a time. */
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export default defineTool({
  name: "list_requests",
  title: "List this key's requests",
  description:
    "Lists this API key's paid calls from the local ledger (no service call, no Gems), newest first, with task IDs and taskStatus (as last read). Use it to recover a task ID after a lost answer, or to see which requests are uncertain (the same call again replays them).",
  inputSchema: z.strictObject({
    state: z
      .enum(["open", ...SHOWN_STATES, "succeeded"])
      .optional()
      .describe(
        "Only records in this state (accepted: taken by the service; open: outcome unknown, undelivered, or task not seen finish; succeeded = accepted).",
      ),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .optional()
      .describe(`Records per page; default ${DEFAULT_LIMIT}.`),
    cursor: z.string().max(512).optional().describe("The previous page's nextCursor."),
    taskId: z.string().min(1).max(128).optional().describe("Only the request that created this task."),
    idempotencyKey: idempotencyKeyField.describe("Only the request with this identity."),
  }),
  outputSchema: z.object({
    requests: z
      .array(
        z.looseObject({
          idempotencyKey: z.string(),
          tool: z.string(),
          state: z.string(),
          taskId: z.string().optional(),
          taskStatus: z.string().optional(),
          model: z.string().optional(),
          createdAt: z.string(),
          updatedAt: z.string(),
        }),
      )
      .describe("Times are ISO 8601."),
    nextCursor: z.string().optional().describe("Absent on the last page."),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(args, _ctx, engine) {
    const limit = args.limit ?? DEFAULT_LIMIT;
    // One more than asked: whether it exists says if there is a next page.
    const found = await engine.ledger.list(engine.keyHash, {
      limit: limit + 1,
      ...(args.state === undefined ? {} : { state: storedFilter(args.state) }),
      ...(args.cursor === undefined ? {} : { cursor: args.cursor }),
      ...(args.taskId === undefined ? {} : { taskId: args.taskId }),
      ...(args.idempotencyKey === undefined ? {} : { idempotencyKey: args.idempotencyKey }),
    });
    // What tells requests apart and what to do next; the ledger's bookkeeping (endpoint, attempts,
    // expiry) stays out, to keep pages small.
    const requests = found.slice(0, limit).map(({ endpoint: _e, attempts: _a, expiresAt: _x, ...shown }) => ({
      ...shown,
      state: shownState(shown.state),
    }));
    const last = found[requests.length - 1];
    const nextCursor = found.length > limit && last !== undefined ? listCursor(last) : undefined;
    const lines = found.slice(0, limit).map(requestLine);
    const filters = [
      args.state ? `in state ${args.state}` : "",
      args.taskId ? `for task ${args.taskId}` : "",
      args.idempotencyKey ? `with identity ${args.idempotencyKey}` : "",
    ].filter(Boolean);
    const note = engine.ledger.durabilityNote;
    const text = [
      ...(note === undefined ? [] : [`Warning: ${note}`]),
      `${requests.length} request${requests.length === 1 ? "" : "s"}${filters.length ? ` ${filters.join(" ")}` : ""}${args.cursor ? " (continued)" : ""}, newest first.`,
      ...lines,
      nextCursor === undefined
        ? "Next: poll_task with a taskId to read a task; an uncertain request replays when called again with the same arguments."
        : `More: call list_requests with cursor "${nextCursor}" for older requests. Next: poll_task with a taskId to read a task.`,
    ];
    return okResult(text.join("\n"), nextCursor === undefined ? { requests } : { requests, nextCursor });
  },
});

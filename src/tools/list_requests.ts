import { z } from "zod";
import { listCursor } from "../ledger/listing.js";
import { defineTool } from "../mcp/define-tool.js";
import { idempotencyKeyField, nextOut } from "../mcp/fields.js";
import { AFTER } from "../mcp/next-steps.js";
import { requestLine, SHOWN_STATES, shownState, storedFilter } from "../mcp/request-view.js";
import { okResult } from "../mcp/results.js";

/** Small by default: hosts cap tool output, and a person looks for one lost request at a time. */
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export default defineTool({
  name: "list_requests",
  title: "List this key's requests",
  description:
    "This key's paid calls (the local ledger; free), newest first, with task IDs: recovers a lost task ID; an uncertain request replays, uncharged, when called again with the same arguments.",
  inputSchema: z.strictObject({
    state: z
      .enum(["open", ...SHOWN_STATES, "succeeded"])
      .optional()
      .describe("open: outcome unknown, undelivered or unfinished; accepted: taken by the service."),
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
    next: nextOut,
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
      `Next: ${AFTER.requests(nextCursor)}`,
    ];
    const next = AFTER.requests(nextCursor);
    return okResult(
      text.join("\n"),
      nextCursor === undefined ? { requests, next } : { requests, nextCursor, next },
    );
  },
});

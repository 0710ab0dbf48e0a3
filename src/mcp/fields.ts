/**
 * Argument and output fields several tools share, described once. Every assistant reads every
 * description on every turn, so an argument's says what it is and the limits its schema keywords
 * cannot; an output field is described where its name and the tool's description leave it unsaid.
 * The rules every paid tool shares (identity, replay, waiting) are said once, in the server's
 * instructions (src/surface/assemble.ts).
 */
import { z } from "zod";
import { TASK_ID_MAX } from "../client/endpoints.js";
import { IdempotencyKeySchema, MediaRequestSchema, TextMaxGemsSchema } from "../client/schemas.js";
import { MAX_WAIT_SECONDS } from "../config/bounds.js";
import { DEFAULT_WAIT_CAP_SECONDS } from "../config/time-limits.js";

export { MAX_WAIT_SECONDS };

// ---------- argument fields shared by several tools ----------

export const waitField = z
  .number()
  .min(0)
  .max(MAX_WAIT_SECONDS)
  .optional()
  .describe(`Seconds to wait, at most ${DEFAULT_WAIT_CAP_SECONDS}.`);
export const saveField = z.boolean().optional().describe("Save finished outputs too.");
export const idempotencyKeyField = IdempotencyKeySchema.optional().describe("An identity, to replay it.");
// Its length is bounded where it is read (src/calls/paid/approval.ts): tools/list's bytes are scarce.
export const approvalField = z.string().optional().describe("An approved quote's token.");
/** Text and extraction share this ceiling (0 to 1,000,000, docs/service.md#limits). */
export const textMaxGemsField = TextMaxGemsSchema.optional().describe("Most Gems to reserve.");

export const modelField = (kind: string) =>
  MediaRequestSchema.shape.model.describe(`ID from list_models (kind ${kind}).`);

/**
 * A prompt that says something: the service takes an empty one and charges for it, so an empty or
 * blank prompt is refused here, before anything is spent.
 */
export const nonBlank = <S extends z.ZodString>(schema: S, what: string) =>
  schema.refine((text) => text.trim() !== "", `must not be empty or only spaces: ${what}`);

export const taskIdField = z
  .string()
  .min(1)
  .max(TASK_ID_MAX)
  .describe("Task ID from a generate tool or list_requests.");

// ---------- shared output fields ----------

/**
 * The service's task (docs/service.md#responses; the client's TaskSchema, its one definition), as
 * poll_task advertises it: the fields a caller acts on typed, the rest described once in prose
 * (every tools/list stays within 20,000 bytes with generate_batch listed too; the result itself
 * carries every field, in its text and structuredContent).
 */
export const TaskOut = z
  .looseObject({ id: z.string(), status: z.string(), outputs: z.array(z.looseObject({})) })
  .describe("Output URLs expire.");
/**
 * The task in a submission's or a save's result: the same Task as poll_task's `task`, typed here
 * only where a caller acts on it, so its fields are described once (in poll_task's schema). Not
 * described: its name and each tool's description ("returns the task") say what it is.
 */
export const TaskBriefOut = z.looseObject({ id: z.string(), status: z.string() });
export const savedOut = z.array(z.string()).optional();
/**
 * The step to take next, within the host's limits ("nothing: done" where none), in every tool's
 * result (src/mcp/results.ts, okResult). Not described: its name says it, and the server's
 * instructions say what it is once, rather than each of a dozen listed schemas.
 */
export const nextOut = z.string();

// ---------- a paid call's quote (nothing sent; src/calls/paid/quote.ts) ----------

/**
 * On a quote only: `{token, gems}` and what the quote says (`tell`, `next`, the estimate's
 * `factors`, `threshold`, `reason`, `expiresAt`, `tool`). Listed as an open object: every listed
 * byte goes to every client (tools/list stays within 20,000), and the quote's text says the same.
 */
export const approvalOut = z.looseObject({}).optional();

/**
 * Every time limit of a paid call, in one table: what a call may spend on each step, so the
 * budget a caller is promised (its `wait` plus GRACE_SECONDS, and by default well under the ~60 s
 * hosts allow a tool call) is visible in one place. Plain numbers: every room may read them.
 *
 * A call's budget, from the start:
 *   check, confirm, claim ─ send (each attempt ≤ SUBMIT_ATTEMPT_MS; replays ≤ DEFAULT_MAX_ELAPSED_MS,
 *   and never past the budget less ANSWER_RESERVE_MS) ─ wait (until PRESENT_RESERVE_MS before the
 *   end) ─ present (previews ≤ PREVIEW_CAP_MS; saving until ANSWER_MS before the end) ─ answer.
 */

/** Seconds a generation call gets on top of its `wait` for submitting, presenting and saving. */
export const GRACE_SECONDS = 8;
/** A call that names no `wait` of its own (or chat, extraction) never runs longer than this. */
export const DEFAULT_BUDGET_CAP_MS = 55_000;
/**
 * The longest wait that fits one call of DEFAULT_BUDGET_CAP_MS: what a call without a `wait` of
 * its own waits at most, and the most any result suggests for the next poll_task.
 */
export const DEFAULT_WAIT_CAP_SECONDS = DEFAULT_BUDGET_CAP_MS / 1000 - GRACE_SECONDS;
/** Sending stops this long before the budget ends, to record "uncertain" and answer with the identity. */
export const ANSWER_RESERVE_MS = 1_000;
/** One media submission attempt: the service answers at once (the work is queued); longer is uncertain. */
export const SUBMIT_ATTEMPT_MS = 15_000;
/** The ledger replays an uncertain outcome for at most this long when the caller gives no budget. */
export const DEFAULT_MAX_ELAPSED_MS = 30_000;
/** Waiting for a task stops this long before the budget ends, for previews, saving and the answer. */
export const PRESENT_RESERVE_MS = 5_000;
/** All inline previews of one result together. */
export const PREVIEW_CAP_MS = 3_000;
/** Kept back from previews and saving so the answer itself still fits in the budget. */
export const ANSWER_MS = 1_000;
/** The model catalog read that informs estimates: it never holds a call up longer than this. */
export const CATALOG_READ_MS = 5_000;
/**
 * An identical call (or list_requests) waits at most this long for an answer just given to be
 * marked delivered or lost by its transport, before it decides from the record as it stands.
 */
export const DELIVERY_MARK_WAIT_MS = 2_000;
/**
 * A success's write waits at most this long to be written with its delivered mark (one commit
 * instead of two); a read of the record writes it at once.
 */
export const SUCCESS_HOLD_MS = 1_000;
/**
 * A question to the user about spending (elicitation pushed on 2025-11-25) is waited for at most
 * this long: some hosts declare elicitation and never draw the form (the request would die at
 * their ~60 s); unanswered by then, the call answers a quote with an approval token instead
 * (src/calls/paid/spending.ts), leaving room in the host's 60 s.
 */
export const QUESTION_ANSWER_MS = 25_000;
/** A quote's approval token stays good this long (src/calls/paid/approval.ts). */
export const APPROVAL_TTL_MS = 15 * 60 * 1000;
/** One request to the service when its caller names no shorter limit. */
export const REQUEST_TIMEOUT_MS = 120_000;

/**
 * MCP tasks (docs/tasks.md). A task stays readable through `tasks/get` for TASK_TTL_MS from its
 * creation (its `ttlMs`); its work waits for the generation at most TASK_WAIT_MS, then completes
 * with the task as it stands (poll_task follows it from there).
 */
export const TASK_TTL_MS = 24 * 60 * 60 * 1000;
export const TASK_WAIT_MS = 60 * 60 * 1000;
/**
 * The process driving a task's work holds it this long, renewed every third of it; after a crash,
 * the first `tasks/get` once it lapsed (on any replica) takes the work over.
 */
export const TASK_LEASE_MS = 15_000;
/**
 * `pollIntervalMs`, from the work's next read of the service: come back `leadMs` before it (a
 * `tasks/get` then is held up to `holdMs` for the read's outcome), or `afterMs` after it where it
 * is due; within [minMs, maxMs]; `unscheduledMs` while nothing is scheduled (sending, presenting);
 * at most `staleMs` while a read is long overdue (its process may have stopped: its lease lapses).
 */
export const TASK_POLL = {
  leadMs: 100,
  afterMs: 150,
  minMs: 100,
  maxMs: 15_000,
  unscheduledMs: 500,
  staleMs: 5_000,
  /** The least wait asked of a poller while a stopped driver's lease runs out: no poll can help it. */
  stalledMinMs: 1_000,
  holdMs: 2_000,
} as const;
/**
 * The media viewer's last upload chunk waits this long for the service to take the file; past it
 * the view is told the upload is still being sent and asks again (hosts cut calls at about 60 s).
 */
export const VIEWER_UPLOAD_ANSWER_MS = 40_000;

/**
 * What a paid call's MCP task keeps about its work (`context` of src/calls/mcp-task/mcp-task-store.ts), the steps
 * after the claim that work is rebuilt into, the one store of tasks per ledger, and what a
 * cancelled task says about the money.
 */
import type { Ledger, RunResult } from "../../ledger/open-ledger.js";
import type { Budget } from "../../mcp/budget.js";
import type { Engine, ToolContext } from "../../mcp/context.js";
import type { ToolOutcome } from "../../mcp/define-tool.js";
import { LedgerTaskStore, type StoredTask } from "./mcp-task-store.js";

/** What the send answered, kept so a process taking the work over reads the service's task again. */
export interface SentFacts {
  /** The identity existed before (a replay) or the call joined one in flight. */
  reused: boolean;
  joined: boolean;
  /** The service's task (media). */
  taskId?: string;
  /** The service said the work was new (media). */
  created?: boolean;
}

export interface TaskContext {
  /** The ledger identity the request was claimed under. */
  identity: string;
  /** The call kind's description of its request (src/calls/mcp-task/mcp-task-resume.ts rebuilds its steps from it). */
  work: Record<string, unknown>;
  sent?: SentFacts;
  /** The first line of how sending ended without a task (a refusal), once it has. */
  ended?: string;
  /** The result came through the call's presenting (not a refusal): carried to the client, it is delivered. */
  deliverable?: boolean;
}

/** Where the steps after the claim run: this call's context and budget, or a task's. */
export interface Within {
  ctx: ToolContext;
  budget: Budget;
  /** How long a wait for the service's task may last, in seconds. */
  waitSeconds: number;
  /** Said in the answer when the call's `wait` was held to what one call may take (src/mcp/budget.ts). */
  waitNote?: string | undefined;
}

/**
 * What follows the claim, for one call kind: built alike for a fresh call and for a task taken
 * over after a restart (mcp-task-resume.ts), from `work` alone.
 */
export interface Steps<T> {
  /** The call kind's own description of the request (JSON): all a task stores to rebuild these steps. */
  work: Record<string, unknown>;
  /**
   * Step 3: claims the identity (`identity`: this one, to go on with a claimed request) and sends
   * the bytes within `budget`; `onClaimed` once the claim is durable.
   */
  send(
    ctx: ToolContext,
    budget: Budget,
    o?: { identity?: string; onClaimed?: (identity: string) => void },
  ): Promise<RunResult<T>>;
  /** What a task records once sent: the service's task ID (media) and whether it was new work. */
  facts(result: T): Omit<SentFacts, "reused" | "joined">;
  /** Reads the service's task again instead of sending, where it is known (media only). */
  known?(taskId: string, sent: SentFacts | undefined, signal: AbortSignal): Promise<T>;
  /** Steps 4 and 5's result: wait (media) and present. */
  present(run: RunResult<T>, within: Within): Promise<ToolOutcome>;
  /** A failure after the claim, as the call's result (with the identity). */
  refuse(err: unknown): ToolOutcome;
}

/**
 * How a stored task's work becomes its steps again, by the tool that made it (the paid calls'
 * table, src/calls/paid/resumable.ts, handed to registerTasks): refuses a tool it does not know.
 */
export type Resumable = (engine: Engine, work: TaskContext["work"]) => Promise<Steps<unknown>>;

export const contextOf = (rec: StoredTask): TaskContext => rec.context as unknown as TaskContext;

const stores = new WeakMap<Ledger, Promise<LedgerTaskStore>>();

/** The tasks of this engine's ledger store (one per ledger, shared by its engines). */
export function taskStore(engine: Engine): Promise<LedgerTaskStore> {
  let store = stores.get(engine.ledger);
  if (store === undefined) {
    store = engine.ledger.keyed().then((kv) => new LedgerTaskStore(kv, { cancelledMessage }));
    // A store that could not be opened is tried again next time.
    store.catch(() => stores.delete(engine.ledger));
    stores.set(engine.ledger, store);
  }
  return store;
}

/**
 * What a cancelled task says. The service cannot cancel work it accepted, so cancelling stops
 * only the waiting: work already sent goes on and is charged, and stays reachable.
 */
export function cancelledMessage(rec: StoredTask): string {
  const { identity, sent, ended } = contextOf(rec);
  if (ended !== undefined) return `Stopped waiting at your request. Sending the request ended: ${ended}`;
  const stopped = "Stopped waiting at your request. The service has no cancellation:";
  if (sent?.taskId !== undefined) {
    return `${stopped} task ${sent.taskId} (identity ${identity}) was sent, goes on and is charged as it finishes. Its record and outputs stay reachable: poll_task with taskId "${sent.taskId}", or list_requests.`;
  }
  if (sent !== undefined) {
    return `${stopped} the request (identity ${identity}) was sent and is charged. list_requests shows it; calling again with idempotencyKey "${identity}" returns its saved answer without charging again.`;
  }
  return `${stopped} the request (identity ${identity}) was being sent; if it arrived, it goes on and is charged. list_requests shows it; calling again with the same arguments or idempotencyKey "${identity}" picks it up without charging twice.`;
}

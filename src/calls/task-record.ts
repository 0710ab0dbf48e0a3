/**
 * What a paid call's MCP task keeps about its work (`context` of src/mcp/task-store.ts), the one
 * store of tasks per ledger, and what a cancelled task says about the money.
 */
import type { Ledger } from "../ledger/open-ledger.js";
import type { Engine } from "../mcp/context.js";
import { LedgerTaskStore, type StoredTask } from "../mcp/task-store.js";

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
  /** The call kind's description of its request (src/calls/resume.ts rebuilds its steps from it). */
  work: Record<string, unknown>;
  sent?: SentFacts;
  /** The first line of how sending ended without a task (a refusal), once it has. */
  ended?: string;
  /** The result came through the call's presenting (not a refusal): carried to the client, it is delivered. */
  deliverable?: boolean;
}

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

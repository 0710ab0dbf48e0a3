/**
 * The ledger's records as they are read back: a page of one key's records (list_requests), and
 * the open records of every key at start (recovery).
 */
import { ArgumentError } from "../shared/local-refusals.js";
import type { ListOptions } from "./ledger-types.js";
import { type LedgerRecord, parseListCursor, toListing } from "./listing.js";
import { isOpen } from "./record-rules.js";
import { type LedgerStore, listPage } from "./store.js";

/** A page of `keyHash`'s records, newest first, as `o` filters them. */
export async function listRecords(
  store: LedgerStore,
  keyHash: string,
  o: ListOptions,
  now: number,
): Promise<LedgerRecord[]> {
  const after = o.cursor === undefined ? undefined : parseListCursor(o.cursor);
  if (o.cursor !== undefined && after === undefined) {
    throw new ArgumentError("cursor", "is not a cursor this list returned; omit it to start from the newest");
  }
  const q = {
    keyHash,
    now,
    limit: o.limit ?? Number.MAX_SAFE_INTEGER,
    ...(o.state === undefined ? {} : { state: o.state }),
    ...(o.taskId === undefined ? {} : { taskId: o.taskId }),
    ...(after === undefined ? {} : { after }),
  };
  if (o.idempotencyKey !== undefined) {
    // One identity is one record: read it directly, then apply the same filters.
    const rec = await store.get(keyHash, o.idempotencyKey);
    return listPage(rec === undefined ? [] : [rec], q).map(toListing);
  }
  return (await store.listPage(q)).map(toListing);
}

/** Every key's open records, newest first: what a restart finds unresolved or undelivered. */
export async function openRecords(store: LedgerStore): Promise<Array<LedgerRecord & { keyHash: string }>> {
  const rows = await store.listAll();
  return rows
    .filter(isOpen)
    .sort((a, b) => b.createdAt - a.createdAt)
    .map((r) => ({ ...toListing(r), keyHash: r.keyHash }));
}

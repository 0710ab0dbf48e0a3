/**
 * A record's delivered mark (docs/idempotency.md#delivery). A success's answers, handed to their
 * transport, hold identical calls and listings (handover.ts) until the transport says whether the
 * client got them; written, the record is marked delivered and its retention time starts; a mark
 * taken back (lost, cancelled) stops it, and an identical call replays the record.
 */
import { bodyKey, type Handovers, identityKey } from "./handover.js";
import type { DeliveryMark, LedgerSettings, RunRequest } from "./ledger-types.js";
import type { StoredRecord } from "./record.js";
import { isExpired } from "./record-rules.js";
import type { LedgerStore } from "./store.js";
import { type Change, deliveredMark, type RecordWriter } from "./writes.js";

export class DeliveryMarks {
  readonly #store: LedgerStore;
  readonly #writer: RecordWriter;
  readonly #handovers: Handovers;
  readonly #o: LedgerSettings;

  constructor(store: LedgerStore, writer: RecordWriter, handovers: Handovers, settings: LedgerSettings) {
    this.#store = store;
    this.#writer = writer;
    this.#handovers = handovers;
    this.#o = settings;
  }

  /**
   * The answers of one result (its caller's, and those of calls that joined it) are on their way:
   * identical calls and listings wait for the delivered mark. `written` is the record as its
   * success write leaves it, so the mark is one compare-and-set write, and one for all answers.
   */
  handOver(req: RunRequest, bodyHash: string, written: StoredRecord): () => DeliveryMark {
    const keys = [bodyKey(req.keyHash, req.tool, bodyHash), identityKey(req.keyHash, written.identity)];
    let marking: Promise<unknown> | undefined;
    return () =>
      this.#handovers.open(req.keyHash, keys, async (delivered) => {
        if (!delivered) return;
        marking ??= this.#writer.save(written, this.#mark(true));
        await marking;
      });
  }

  /** Marks a record delivered or not, whoever delivered it (tools mark every replayed result too). */
  async mark(keyHash: string, identity: string, delivered: boolean): Promise<void> {
    // After this ledger's own queued writes to the record, so the read sees them.
    await this.#writer.pending(keyHash, identity);
    const rec = await this.#store.get(keyHash, identity);
    if (rec === undefined || isExpired(rec, this.#o.now())) return;
    // Already so: spare the commit.
    if (
      rec.delivered === delivered &&
      (rec.state !== "succeeded" || (rec.expiresAt !== undefined) === delivered)
    ) {
      return;
    }
    await this.#writer.save(rec, this.#mark(delivered));
  }

  /** The delivered mark; a success delivered starts its retention time, one taken back stops it. */
  #mark(delivered: boolean): Change {
    return (cur) => deliveredMark(cur, delivered, this.#o.now() + this.#o.retentionMs);
  }
}

/**
 * A Ledger that opens the real one on first use, so a client's first tools/list does not wait for
 * the store (SQLite, a driver) to load. A failed open is retried on the next call.
 */
import type { Ledger } from "./open-ledger.js";

export class LazyLedger implements Ledger {
  private opening: Promise<Ledger> | undefined;
  private opened: Ledger | undefined;
  constructor(private readonly opener: () => Promise<Ledger>) {}

  /** Opens the real ledger now (idempotent). */
  async open(): Promise<void> {
    await this.get();
  }

  private get(): Promise<Ledger> {
    if (this.opening === undefined) {
      this.opening = this.opener().then(
        (ledger) => {
          this.opened = ledger;
          return ledger;
        },
        (error: unknown) => {
          this.opening = undefined;
          throw error;
        },
      );
    }
    return this.opening;
  }

  get recovered(): Ledger["recovered"] {
    return this.opened?.recovered ?? [];
  }

  get description(): string {
    return this.opened?.description ?? "not opened yet (opens on first use)";
  }

  get durabilityNote(): string | undefined {
    return this.opened?.durabilityNote;
  }

  run: Ledger["run"] = async (req, send, ref) => (await this.get()).run(req, send, ref);
  markDelivered: Ledger["markDelivered"] = async (keyHash, identity, delivered) =>
    (await this.get()).markDelivered(keyHash, identity, delivered);
  list: Ledger["list"] = async (keyHash, o) => (await this.get()).list(keyHash, o);
  noteSeen: Ledger["noteSeen"] = async (keyHash, taskId, seen) =>
    (await this.get()).noteSeen(keyHash, taskId, seen);
  noteStatus: Ledger["noteStatus"] = async (keyHash, taskId, seen) =>
    (await this.get()).noteStatus(keyHash, taskId, seen);
  taskOrigin: Ledger["taskOrigin"] = async (keyHash, taskId) =>
    (await this.get()).taskOrigin(keyHash, taskId);
  durations: Ledger["durations"] = async (keyHash, model, limit) =>
    (await this.get()).durations(keyHash, model, limit);

  keyed: Ledger["keyed"] = async () => (await this.get()).keyed();
  chunks: Ledger["chunks"] = async () => (await this.get()).chunks();

  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    this.opened = undefined;
    if (opening !== undefined) await (await opening.catch(() => undefined))?.close();
  }
}

/**
 * The ledger's state machine: claim (or reuse) an identity, commit it before the first byte,
 * replay uncertain outcomes under the same identity and bytes, close definitive ones.
 */

import { sleep } from "../client/backoff.js";
import { SUCCESS_HOLD_MS } from "../config/time-limits.js";
import type { DurationSample } from "../shared/poll-schedule.js";
import { checkRequest, freshRecord, isReusable, refusal } from "./checks.js";
import type { ChunkStore } from "./chunk-store.js";
import { checkDay, DayCounts } from "./day-budget.js";
import { DeliveryMarks } from "./delivery-marks.js";
import { TaskHistory } from "./durations.js";
import { summarize } from "./error-summary.js";
import { Flights } from "./flights.js";
import { bodyKey, Handovers, identityKey } from "./handover.js";
import { bodyHash, newIdentity } from "./identity.js";
import type { KeyedStore } from "./keyed-store.js";
import { IdempotencyConflictError, IdentifiedError, LedgerError } from "./ledger-errors.js";
import { listRecords, openRecords } from "./ledger-list.js";
import type {
  Ledger,
  LedgerSettings,
  ListOptions,
  Ref,
  RunRequest,
  RunResult,
  Send,
} from "./ledger-types.js";
import type { LedgerRecord } from "./listing.js";
import type { StoredRecord, TaskSeen, TaskStatusSeen } from "./record.js";
import {
  attemptLimit,
  backoffDelay,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_ELAPSED_MS,
  neverSent,
  verdict,
} from "./replay.js";
import type { LedgerStore } from "./store.js";
import { change, closeUnsent, RecordWriter } from "./writes.js";

export class LedgerImpl implements Ledger {
  readonly #store: LedgerStore;
  readonly #o: LedgerSettings;
  readonly #flights = new Flights();
  readonly #writer: RecordWriter;
  readonly #history: TaskHistory;
  readonly #handovers = new Handovers();
  readonly #marks: DeliveryMarks;
  /** Day counts not yet written (day-budget.ts). */
  readonly #counts: DayCounts;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  recovered: ReadonlyArray<LedgerRecord & { keyHash: string }> = [];

  constructor(store: LedgerStore, settings: LedgerSettings) {
    this.#store = store;
    this.#o = settings;
    this.#writer = new RecordWriter(store, settings);
    this.#history = new TaskHistory(store, this.#writer, settings.now);
    this.#marks = new DeliveryMarks(store, this.#writer, this.#handovers, settings);
    this.#counts = new DayCounts(() => store.keyed());
  }

  get description(): string {
    return this.#store.description;
  }

  get durabilityNote(): string | undefined {
    return this.#store.durabilityNote;
  }

  run<T>(req: RunRequest, send: Send<T>, ref: Ref<T>): Promise<RunResult<T>> {
    try {
      checkRequest(req);
    } catch (err) {
      return Promise.reject(err);
    }
    if (req.signal?.aborted) return Promise.reject(req.signal.reason);
    const hash = bodyHash(req.bytes);
    // An identical result just handed to its transport: decide once its delivered mark is known.
    const keys = [bodyKey(req.keyHash, req.tool, hash)];
    if (req.idempotencyKey !== undefined) keys.push(identityKey(req.keyHash, req.idempotencyKey));
    if (this.#handovers.pending(keys)) {
      return this.#handovers.forKeys(keys).then(() => this.#start(req, hash, send, ref));
    }
    return this.#start(req, hash, send, ref);
  }

  /** Identical calls in this process share one attempt; the claim makes it safe across processes. */
  #start<T>(req: RunRequest, hash: string, send: Send<T>, ref: Ref<T>): Promise<RunResult<T>> {
    const key = [req.keyHash, req.tool, hash, req.idempotencyKey ?? ""].join("\u0000");
    return this.#flights.fly(
      key,
      req.signal,
      (claimed) => this.#execute(req, hash, send, ref, claimed),
      () => this.run(req, send, ref),
      req.onClaimed,
    );
  }

  async #execute<T>(
    req: RunRequest,
    hash: string,
    send: Send<T>,
    ref: Ref<T>,
    claimed: (identity: string) => void,
  ): Promise<RunResult<T>> {
    const now = this.#o.now();
    let claim: Awaited<ReturnType<LedgerStore["claim"]>>;
    const budget = this.#o.dayBudget;
    try {
      if (budget !== undefined)
        await checkDay(
          this.#store.keyed(),
          req.keyHash,
          budget,
          req.bytes.length,
          now,
          this.#counts.unwritten(req.keyHash, now),
        );
      claim = await this.#store.claim({
        keyHash: req.keyHash,
        tool: req.tool,
        bodyHash: hash,
        ...(req.idempotencyKey === undefined ? {} : { identity: req.idempotencyKey }),
        now,
        newIdentity: () => newIdentity(now),
        reusable: isReusable,
        fresh: (identity) => freshRecord(req, identity, hash, now),
      });
    } catch (cause) {
      if (cause instanceof LedgerError && cause.code === "LEDGER_DAY_BUDGET") throw cause;
      throw refusal("could not record the request, so nothing was sent", cause);
    }
    if (claim.kind === "conflict") {
      const other = claim.record.tool === req.tool ? "a different body" : `tool ${claim.record.tool}`;
      throw new IdempotencyConflictError(claim.record.identity, `it belongs to ${other}`);
    }
    claimed(claim.record.identity);
    req.onClaimed?.(claim.record.identity);
    const run = this.#loop(claim.record, claim.kind === "reused", req, hash, send, ref);
    // Counted off the call's path (day-budget.ts): a lost count only lets a key store a little more.
    if (budget !== undefined && claim.kind === "new")
      this.#counts.add(req.keyHash, req.bytes.length, now, run);
    return run;
  }

  async #loop<T>(
    start: StoredRecord,
    reused: boolean,
    req: RunRequest,
    hash: string,
    send: Send<T>,
    ref: Ref<T>,
  ): Promise<RunResult<T>> {
    let rec = start;
    const { identity } = rec;
    const maxAttempts = Math.max(1, req.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
    const maxElapsedMs = req.maxElapsedMs ?? DEFAULT_MAX_ELAPSED_MS;
    const began = performance.now();
    // Whether any attempt may have reached the service: a resumed record's earlier ones may have.
    let reached = reused && start.state !== "prepared";
    let lastErr: unknown;
    for (let n = 0; n < maxAttempts; n++) {
      if (n > 0) {
        const delay = backoffDelay(n - 1, lastErr, this.#o.backoff, this.#o.random);
        if (performance.now() - began + delay > maxElapsedMs) break;
        // An abort ends the wait and the loop; the record stays open for an identical call.
        const waited = await sleep(delay, req.signal).then(
          () => true,
          () => false,
        );
        if (!waited) break;
      }
      if (req.signal?.aborted) break;
      // A new claim is recorded as sent (its first attempt). Later attempts, and a reused record's
      // first: the record is already durable, and after a crash `prepared` resumes exactly as `sent`
      // does (the same identity and bytes are replayed), so the `sent` mark is queued, ordered before
      // every later write, and its commit overlaps the request instead of delaying the first byte.
      // A reused final record (a success never delivered, a retained answer) keeps its state.
      if (n > 0 || reused) {
        rec = this.#writer.queue(rec, (cur) => ({
          patch: { state: "sent", attempts: cur.attempts + 1 },
          drop: ["closedReason", "expiresAt"],
        }));
      }
      req.onAttempt?.(n + 1, lastErr);
      let result: T;
      const attempt = req.attemptMs === undefined ? undefined : attemptLimit(req.signal, req.attemptMs);
      try {
        result = await send(identity, rec.bytes, attempt?.signal ?? req.signal);
      } catch (err) {
        lastErr = err;
        const v = verdict(err);
        if (v !== "replay") {
          const reason = summarize(err, req.scrub);
          const patch: Partial<StoredRecord> = { state: "closed", closedReason: reason, lastError: reason };
          if (v === "retain") patch.retained = true;
          await this.#writer.save(rec, change(patch, v === "retain" ? [] : ["retained"])).catch(() => {});
          throw new IdentifiedError(err, identity, "closed");
        }
        if (!neverSent(err)) reached = true;
        // If even this write fails the record stays `sent`, which resumes the same way.
        rec = await this.#writer
          .save(rec, change({ state: "uncertain", lastError: summarize(err, req.scrub) }))
          .catch(() => rec);
        continue;
      } finally {
        attempt?.release();
      }
      const { taskId, responseId, taskStatus } = ref(result);
      const done: Partial<StoredRecord> = { state: "succeeded", delivered: false };
      if (taskId !== undefined) done.taskId = taskId;
      if (responseId !== undefined) done.responseId = responseId;
      // The status the submission answered, in the same write: the call's own note of it
      // (noteStatus) then finds it held here and costs no read and no commit of its own.
      const now = this.#o.now();
      if (taskStatus !== undefined) done.lastStatus = { status: taskStatus, at: now };
      // The task began between this attempt's send and its answer; with an earlier attempt it may
      // have begun sooner, and the record's creation is the origin instead (durations.ts).
      if (n === 0 && !reused && taskId !== undefined) done.acceptedAt = now;
      // Held (so every later read of this ledger sees it) and not awaited: the result is real either
      // way, and its delivered mark, usually a moment later, is written with it in one commit.
      // Should the write never land, the record stays `sent`, and an identical call replays the
      // identity and the service returns the same task without charging again.
      const written = this.#writer.hold(rec, change(done, ["lastError"]), SUCCESS_HOLD_MS);
      return { identity, result, reused, joined: false, handOver: this.#marks.handOver(req, hash, written) };
    }
    const cause = lastErr ?? req.signal?.reason ?? new Error("no attempt was made");
    if (!reached && neverSent(cause)) {
      // Nothing ever left: the outcome is known (not sent), so the record closes rather than wait
      // as uncertain; an identical call later is a new request.
      const how = closeUnsent(rec.attempts, summarize(cause, req.scrub));
      rec = await this.#writer.save(rec, how).catch(() => rec);
    }
    throw new IdentifiedError(cause, identity, rec.state);
  }

  markDelivered(keyHash: string, identity: string, delivered: boolean): Promise<void> {
    return this.#marks.mark(keyHash, identity, delivered);
  }

  async list(keyHash: string, o: ListOptions = {}): Promise<LedgerRecord[]> {
    // After the delivered marks of answers just given, and this ledger's queued writes, so a
    // listing shows what its calls already returned as delivered.
    await this.#handovers.forKeyHash(keyHash);
    await this.#history.settled();
    await this.#writer.settled();
    return listRecords(this.#store, keyHash, o, this.#o.now());
  }

  noteSeen(keyHash: string, taskId: string, seen: TaskSeen): Promise<void> {
    return this.#history.noteSeen(keyHash, taskId, seen);
  }

  noteStatus(keyHash: string, taskId: string, seen: TaskStatusSeen): Promise<void> {
    return this.#history.noteStatus(keyHash, taskId, seen);
  }

  taskOrigin(keyHash: string, taskId: string): Promise<{ createdAt: number; model?: string } | undefined> {
    return this.#history.taskOrigin(keyHash, taskId);
  }

  durations(keyHash: string, model: string, limit?: number): Promise<DurationSample[]> {
    return this.#history.durations(keyHash, model, limit);
  }

  async keyed(): Promise<KeyedStore> {
    return this.#store.keyed();
  }

  async chunks(): Promise<ChunkStore> {
    return this.#store.chunks();
  }

  async recover(): Promise<void> {
    this.recovered = await openRecords(this.#store);
  }

  sweep(): Promise<number> {
    return this.#store.sweep(this.#o.now());
  }

  /** Sweeping is housekeeping: a failure is retried next time and must not take the server down. */
  sweepEvery(ms: number): void {
    clearInterval(this.#timer);
    this.#timer = setInterval(() => void this.sweep().catch(() => {}), ms);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    if (this.#closed) return;
    this.#closed = true;
    // Queued writes (a success mark not awaited by its call) land before the store closes.
    await Promise.all([this.#writer.settled(), this.#counts.settled()]);
    await this.#store.close();
  }
}

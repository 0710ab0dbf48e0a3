/** The sandbox's shared state and the per-request context handlers receive. */
import type { AssetStore } from "./assets.js";
import type { Clock } from "./clock.js";
import type { Fault, FaultTable, Stats } from "./faults.js";
import type { IdempotencyStore } from "./idempotency.js";
import type { KeyRecord, KeyStore } from "./keys.js";
import type { TaskStore } from "./tasks.js";
import type { VoiceStore } from "./voices.js";

export interface SandboxState {
  clock: Clock;
  keys: KeyStore;
  assets: AssetStore;
  tasks: TaskStore;
  voices: VoiceStore;
  idem: IdempotencyStore;
  faults: FaultTable;
  stats: Stats;
  /** Deterministic ids per prefix (task_, ast_, voice_, chatcmpl-, ext_). */
  nextId: (prefix: string) => string;
  publicBaseUrl: string | undefined;
  /** Resolves pending hangs when the sandbox closes. */
  closing: AbortSignal;
}

export interface RequestCtx {
  s: SandboxState;
  req: Request;
  url: URL;
  key: KeyRecord;
  /** "METHOD /path" with `{id}` for the task id: the name faults and stats use. */
  route: string;
  /** Where signed file URLs point: publicBaseUrl, else the request's own origin. */
  origin: string;
  fault: Fault | undefined;
}

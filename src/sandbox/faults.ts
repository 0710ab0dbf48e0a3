/**
 * Fault injection (off unless a test turns it on) and request statistics.
 *
 * A route is "METHOD /path" with the placeholder for ids of docs/service.md#endpoints, e.g.
 * "POST /api/generate/image" or "GET /api/generate/tasks/{id}"; "*" matches every route.
 *
 * Faults:
 * - `{status, code?, message?, retryAfter?, commit?}`: answer that status with the error envelope.
 *   By default nothing is done; with `commit: true` the work is recorded first (a 5xx or
 *   409 REQUEST_UNCERTAIN after dispatch, as when the service lost track of its answer).
 * - `{kind: "reset-after-commit"}`: record the work, then drop the connection (a TypeError in
 *   fetch mode, a destroyed socket over HTTP).
 * - `{kind: "hang", commit?}`: never answer (until the caller aborts or the sandbox closes);
 *   the work is recorded unless `commit: false`.
 * - `{kind: "cut-stream"}`: an SSE answer ends before `[DONE]`; any other body breaks midway.
 * - `{kind: "error-frame"}`: an SSE answer carries an error frame REQUEST_UNCERTAIN and stops.
 * - `{kind: "reprice", factor}`: a media submission is quoted `factor` times its catalog price, as
 *   when the price set at submission differs from the catalog's hint (docs/service.md#versioning).
 * - `echoKey: true` on a status fault: the message quotes the request's own bearer key, as a careless
 *   service might: its hex digits upper-cased, with and without the prefix, and base64-encoded.
 *
 * A sandbox in another process takes faults over HTTP: `POST /sandbox/faults` with
 * `{"route", "fault", "times"?}` and any of its keys as the bearer (see router.ts).
 */
export type Fault =
  | {
      status: number;
      code?: string;
      message?: string;
      retryAfter?: number;
      commit?: boolean;
      echoKey?: boolean;
    }
  | { kind: "reset-after-commit" }
  | { kind: "hang"; commit?: boolean }
  | { kind: "cut-stream" }
  | { kind: "error-frame" }
  | { kind: "reprice"; factor: number };

export class FaultTable {
  private readonly queue: { route: string; fault: Fault; left: number }[] = [];

  inject(route: string, fault: Fault, times = 1): void {
    if (!(Number.isInteger(times) && times > 0)) throw new RangeError("times must be a positive integer");
    this.queue.push({ route, fault, left: times });
  }

  clear(): void {
    this.queue.length = 0;
  }

  /** Takes the next fault for a route, if any, using up one of its times. */
  take(route: string): Fault | undefined {
    const i = this.queue.findIndex((f) => f.route === route || f.route === "*");
    const entry = this.queue[i];
    if (!entry) return undefined;
    if (--entry.left === 0) this.queue.splice(i, 1);
    return entry.fault;
  }
}

export class Stats {
  private readonly requestCounts = new Map<string, number>();
  private readonly dispatchCounts = new Map<string, number>();

  request(route: string): void {
    this.requestCounts.set(route, (this.requestCounts.get(route) ?? 0) + 1);
  }
  dispatch(route: string): void {
    this.dispatchCounts.set(route, (this.dispatchCounts.get(route) ?? 0) + 1);
  }
  requests(route?: string): number {
    return count(this.requestCounts, route);
  }
  dispatches(route?: string): number {
    return count(this.dispatchCounts, route);
  }
}

function count(m: Map<string, number>, route?: string): number {
  if (route !== undefined) return m.get(route) ?? 0;
  let total = 0;
  for (const n of m.values()) total += n;
  return total;
}

/** What a careless service might write into an error about the key it was sent. */
export function echoedKey(authorization: string | null): string {
  const key = /^Bearer (\S+)$/.exec(authorization ?? "")?.[1] ?? "";
  const digits = key.replace(/^lgk_/, "");
  return ` Key ${digits.toUpperCase()} (${key.toUpperCase()}; Basic ${Buffer.from(key).toString("base64")}) was used.`;
}

/** Reads `{route, fault, times?}` as sent to `POST /sandbox/faults`; undefined when it is not that. */
export function parseInjection(body: unknown): { route: string; fault: Fault; times: number } | undefined {
  const b = body as { route?: unknown; fault?: unknown; times?: unknown } | null;
  if (typeof b?.route !== "string" || b.fault === null || typeof b.fault !== "object") return undefined;
  const f = b.fault as Record<string, unknown>;
  const known =
    typeof f.status === "number" ||
    ["reset-after-commit", "hang", "cut-stream", "error-frame"].includes(f.kind as string) ||
    (f.kind === "reprice" && typeof f.factor === "number" && f.factor > 0 && Number.isFinite(f.factor));
  const times = b.times ?? 1;
  if (!known || !Number.isInteger(times) || (times as number) < 1) return undefined;
  return { route: b.route, fault: f as Fault, times: times as number };
}

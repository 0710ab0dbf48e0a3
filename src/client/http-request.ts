/**
 * The one request path to the service. Everything that leaves the process for the
 * service goes through `ServiceHttp`: the base URL, the bearer key (only to the base
 * URL's origin), a timeout on every request, error envelopes turned into the
 * ServiceError family, and retries for reads only (a submission or an upload is never
 * repeated here: the ledger owns that decision).
 */
import type { z } from "zod";
import { REQUEST_TIMEOUT_MS } from "../config/time-limits.js";
import { lazy } from "../shared/lazy.js";
import { type Backoff, retryDelay, sleep } from "./backoff.js";
import { failureOf, type Limit, limitSignal } from "./deadline.js";
import { connectFailure, isRedirect, redirected } from "./http-failures.js";
import type { LastParse } from "./last-parse.js";
import { type Exchanged, exchange } from "./node-exchange.js";
import { type FetchLike, proxyFetch, proxyFromEnv, undiciFetch } from "./proxy.js";
import { errorOf, errorOfText, parseBody, readText } from "./responses.js";
import { type RequestKind, ServiceError } from "./service-errors.js";

export type { FetchLike };

export interface HttpOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: FetchLike | undefined;
  /** Per-attempt timeout; streams treat it as the longest silence between chunks. */
  timeoutMs?: number | undefined;
  /** Retries of a failed read (GET/HEAD) after the first attempt. */
  readRetries?: number | undefined;
  /** Source of jitter; tests pin it. */
  random?: (() => number) | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** Told when the service refuses the key itself (401 INVALID_API_KEY: revoked, expired). */
  onKeyRefused?: (() => void) | undefined;
}

export interface RequestSpec {
  method: "GET" | "HEAD" | "POST";
  /** Path (and query) relative to the base URL, starting with `/`. */
  path: string;
  kind: RequestKind;
  headers?: Record<string, string>;
  body?: RequestInit["body"];
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /** A fetch chosen for this request (uploads); otherwise the one in force. */
  fetch?: FetchLike | undefined;
}

export const DEFAULT_TIMEOUT_MS = REQUEST_TIMEOUT_MS;
/** undici's own FormData, loaded for a proxied upload only. */
const undiciPackage = lazy(() => import("undici"));
/** The runtime's own fetch as loaded, to tell it from a patched one (msw, instrumentation). */
const NATIVE_FETCH = globalThis.fetch;
const describe = (spec: RequestSpec): string => `${spec.method} ${spec.path.split("?")[0]}`;

/** A Retry-After longer than `retryAfterCapMs` is not waited out inside one read. */
const READ_BACKOFF: Backoff = { baseMs: 500, capMs: 8_000, retryAfterCapMs: 30_000 };

export class ServiceHttp {
  readonly baseUrl: string;
  // A true private field: util.inspect, JSON.stringify and logs of the client never show it.
  readonly #apiKey: string;
  private readonly timeoutMs: number;
  private readonly readRetries: number;
  private readonly random: () => number;
  private readonly injected: FetchLike | undefined;
  private readonly proxied: boolean;
  private readonly onKeyRefused: (() => void) | undefined;

  constructor(o: HttpOptions) {
    // Checked where it was configured (src/config/values.ts); asserted here, where it is parsed.
    const url = new URL(o.baseUrl);
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new TypeError("baseUrl must be http(s)");
    this.baseUrl = url.href.replace(/\/+$/, "");
    this.#apiKey = o.apiKey;
    this.timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.readRetries = o.readRetries ?? 3;
    this.random = o.random ?? Math.random;
    this.injected = o.fetch;
    this.proxied = o.fetch === undefined && proxyFromEnv(o.env ?? process.env);
    this.onKeyRefused = o.onKeyRefused;
  }

  /** The fetch in force: injected, undici through the proxy, or the global one (looked up per call). */
  async fetchImpl(): Promise<FetchLike> {
    if (this.injected) return this.injected;
    if (this.proxied) return proxyFetch();
    return (input, init) => globalThis.fetch(input, init);
  }

  /**
   * The fetch for a streamed upload, and whether the body may recycle its read buffers.
   * Recycling keeps a 30 MiB upload within a few MiB, but is only sound when the consumer
   * writes each chunk out before asking for the next and keeps no reference: undici's
   * HTTP/1 writer does (it awaits 'drain'). Node 20's bundled fetch measured ~25 MiB more
   * for the same upload, so the npm undici is used (imported on first upload only). An
   * injected or patched fetch (tests, instrumentation) may keep chunks: fresh buffers then.
   */
  async uploadFetch(): Promise<{ fetch: FetchLike; recycle: boolean }> {
    if (this.injected) return { fetch: this.injected, recycle: false };
    if (this.proxied) return { fetch: await proxyFetch(), recycle: true };
    if (globalThis.fetch === NATIVE_FETCH) return { fetch: await undiciFetch(), recycle: true };
    return { fetch: (input, init) => globalThis.fetch(input, init), recycle: false };
  }

  /** A FormData the fetch in force can serialise (undici's own when proxied). */
  async formData(): Promise<FormData> {
    if (this.proxied) {
      const undici = await undiciPackage();
      return new undici.FormData() as unknown as FormData;
    }
    return new FormData();
  }

  /**
   * One attempt. Returns the 2xx response with its deadline still armed (the caller
   * reads the body, then clears it); anything else throws a member of the family.
   */
  async open(spec: RequestSpec): Promise<{ res: Response; deadline: Limit }> {
    const url = `${this.baseUrl}${spec.path}`;
    const what = describe(spec);
    const deadline = limitSignal(spec.signal, spec.timeoutMs ?? this.timeoutMs);
    const headers = new Headers(this.#headers(spec));
    const init: RequestInit & { duplex?: "half" } = {
      method: spec.method,
      headers,
      redirect: "manual",
      signal: deadline.signal,
    };
    if (spec.body !== undefined) {
      init.body = spec.body;
      if (spec.body instanceof ReadableStream) init.duplex = "half";
      if (typeof spec.body !== "string") {
        // fetch clones (tees) the request whenever it might follow a redirect, and the
        // unread branch then holds every chunk of an upload until it ends: 30 MiB in
        // memory. `window: null` with `redirect: "error"` is the spec's path with no clone.
        init.redirect = "error";
        init.window = null;
      }
    }
    let res: Response;
    try {
      const f = spec.fetch ?? (await this.fetchImpl());
      res = await f(url, init);
    } catch (err) {
      deadline.release();
      throw connectFailure(failureOf(err, deadline, spec.signal, what, spec.kind), err, spec.kind);
    }
    if (res.ok) return { res, deadline };
    try {
      if (isRedirect(res.status)) {
        void res.body?.cancel().catch(() => {});
        throw redirected(res.status, what, spec.kind);
      }
      throw this.#noted(await errorOf(res, spec.kind, what, deadline.signal));
    } catch (err) {
      if ((err as { name?: string }).name === "AbortError" || deadline.expired()) {
        throw failureOf(err, deadline, spec.signal, what, spec.kind);
      }
      throw err;
    } finally {
      deadline.release();
    }
  }

  /**
   * The request headers: the caller's, the accepted type, and the key (to the base URL's origin
   * and nowhere else: redirects are not followed).
   */
  #headers(spec: RequestSpec): Record<string, string> {
    const out: Record<string, string> = { accept: "application/json" };
    for (const [name, value] of Object.entries(spec.headers ?? {})) out[name.toLowerCase()] = value;
    out.authorization = `Bearer ${this.#apiKey}`;
    return out;
  }

  /** A refusal of the key itself (401 INVALID_API_KEY: revoked, expired) is told before it is thrown. */
  #noted(error: ServiceError): ServiceError {
    if (error.status === 401 && error.code === "INVALID_API_KEY") this.onKeyRefused?.();
    return error;
  }

  /**
   * A request whose JSON answer is parsed with `schema` (or, the same bytes as `last` parsed,
   * reused from it). Reads retry transient failures.
   */
  async json<S extends z.ZodType>(
    spec: RequestSpec,
    schema: S,
    last?: LastParse<z.output<S>>,
  ): Promise<{ status: number; data: z.output<S> }> {
    return this.retrying(spec, async () => {
      const { status, text } = await this.#text(spec);
      const parse = (t: string) => parseBody(schema, t, status, spec.kind, describe(spec));
      return { status, data: last === undefined ? parse(text) : last.of(text, parse) };
    });
  }

  /**
   * One attempt, to the 2xx answer's whole text. A string body or none, with nothing in place of
   * the runtime's fetch (no injected or patched fetch, no proxy), goes over node-exchange.ts.
   */
  async #text(spec: RequestSpec): Promise<{ status: number; text: string }> {
    const small = spec.body === undefined || typeof spec.body === "string";
    if (small && spec.fetch === undefined && this.#plainFetch()) return this.#exchange(spec);
    const { res, deadline } = await this.open(spec);
    try {
      return { status: res.status, text: await readText(res, deadline.signal) };
    } catch (err) {
      throw failureOf(err, deadline, spec.signal, describe(spec), spec.kind);
    } finally {
      deadline.release();
    }
  }

  /** Whether requests would go to the runtime's own fetch (looked up per call: msw patches it). */
  #plainFetch(): boolean {
    return this.injected === undefined && !this.proxied && globalThis.fetch === NATIVE_FETCH;
  }

  async #exchange(spec: RequestSpec): Promise<{ status: number; text: string }> {
    const what = describe(spec);
    const deadline = limitSignal(spec.signal, spec.timeoutMs ?? this.timeoutMs);
    let res: Exchanged;
    try {
      res = await exchange(new URL(`${this.baseUrl}${spec.path}`), {
        method: spec.method,
        headers: this.#headers(spec),
        body: spec.body as string | undefined,
        signal: deadline.signal,
      });
    } catch (err) {
      throw connectFailure(failureOf(err, deadline, spec.signal, what, spec.kind), err, spec.kind);
    } finally {
      deadline.release();
    }
    if (res.status >= 200 && res.status < 300) return res;
    if (isRedirect(res.status)) throw redirected(res.status, what, spec.kind);
    const answer = { status: res.status, statusText: res.statusText, retryAfter: res.header("retry-after") };
    throw this.#noted(errorOfText(answer, res.text, spec.kind, what));
  }

  /** HEAD: the status only (a 404 is an answer, not a failure). */
  async head(spec: Omit<RequestSpec, "method">): Promise<number> {
    const full: RequestSpec = { ...spec, method: "HEAD" };
    return this.retrying(full, async () => {
      try {
        const { res, deadline } = await this.open(full);
        deadline.release();
        void res.body?.cancel().catch(() => {});
        return res.status;
      } catch (err) {
        if ((err as ServiceError).status === 404) return 404;
        throw err;
      }
    });
  }

  /**
   * Runs `attempt` once for submissions and uploads; for reads, retries failures whose
   * outcome is `retryable` (see backoff.ts for the waits). A Retry-After longer than the
   * cap is the caller's to schedule (the error carries it), not ours to block on.
   *
   * Our own loop, on purpose. The waits (full jitter, Retry-After up to a cap) are backoff.ts's,
   * shared with the ledger's replays, so a library would own only this counter. p-retry (9.0.0,
   * Node 22+) computes every wait itself, from minTimeout, factor, maxTimeout and `randomize`
   * (a factor in [1, 2), not full jitter, from Math.random where our tests inject `random`): no
   * option takes a wait per error, so Retry-After is honoured only with its delay at 0 and our
   * sleep inside `onFailedAttempt` (as this client did with p-retry 7 until 07b561b), leaving it
   * the counter alone; and with a `signal` aborted it rejects with the abort reason, even when
   * the attempt that just failed carries the service's error and hint we hand back here.
   * undici's RetryHandler honours Retry-After natively but sits below fetch, as a dispatcher: it
   * never sees an injected or patched fetch (tests, msw, instrumentation), retries before our
   * classification (a 200 whose body does not parse is a retryable read here), has no jitter,
   * and waits a long Retry-After cut to its maxTimeout where we hand the error back with the hint.
   * async-retry takes no AbortSignal and computes its own waits.
   */
  async retrying<T>(spec: RequestSpec, attempt: () => Promise<T>): Promise<T> {
    if (spec.kind !== "read") return attempt();
    for (let n = 0; ; n++) {
      try {
        return await attempt();
      } catch (err) {
        // A redirect is not transient: asking again gets the same answer.
        const transient =
          err instanceof ServiceError &&
          err.outcome === "retryable" &&
          (err.status === undefined || err.status >= 400);
        if (!transient || n >= this.readRetries || spec.signal?.aborted) throw err;
        const delay = retryDelay(n, READ_BACKOFF, this.random, err.retryAfterMs);
        if (delay.cut) throw err;
        await sleep(delay.ms, spec.signal);
      }
    }
  }
}

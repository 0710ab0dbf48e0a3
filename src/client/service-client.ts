/**
 * ServiceClient: every endpoint of the generation service, typed. It knows nothing of
 * MCP or the ledger: submissions are sent exactly once per call with the identity and
 * bytes the caller built (see requests.ts); only reads retry, inside ServiceHttp.
 */

import { LIMITS, type MediaKind } from "../config/service-limits.js";
import { lazy } from "../shared/lazy.js";
import { ArgumentError } from "../shared/local-refusals.js";
import { keyScrubber, type Scrub } from "../shared/scrub.js";
import { AssetKinds } from "./asset-kinds.js";
import { endpointOf, PATHS, taskPath } from "./endpoints.js";
import { DEFAULT_TIMEOUT_MS, type FetchLike, ServiceHttp } from "./http-request.js";
import { LastParse } from "./last-parse.js";
import { checkBytes, checkIdentity } from "./requests.js";
import type {
  Asset,
  ExtractionResponse,
  ModelList,
  Submission,
  Task,
  Voice,
  VoiceList,
  VoiceListQuery,
} from "./schemas.js";
import type { ChatResult } from "./sse.js";
import type { AssetSource, VoiceSource } from "./uploads.js";

export type { ChatResult } from "./sse.js";

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Retries of a failed read after the first attempt (default 3). */
  readRetries?: number;
  /** Source of backoff jitter in [0, 1) (tests pin it). */
  random?: () => number;
  /** Told when the service refuses this key (401 INVALID_API_KEY): an OAuth grant over it ends. */
  onKeyRefused?: () => void;
  /**
   * The catalog's last parse, shared by the clients of one process (engine.ts): it is reused only
   * for the very same bytes, so keys never see each other's answers, and a thousand users hold one
   * parse instead of a thousand. Default: one of this client's own.
   */
  catalog?: LastParse<ModelList>;
}

interface CallOptions {
  signal?: AbortSignal | undefined;
}

/** Signed outputs larger than this are refused unless the caller allows more. */
export const DEFAULT_OUTPUT_MAX_BYTES = 256 * 1024 * 1024;
/** Uploads move up to 50 MiB: they get this many times the ordinary timeout. */
const UPLOAD_TIMEOUT_FACTOR = 5;

const JSON_HEADERS = { "content-type": "application/json" };

/**
 * A client is made at every start, before tools/list is answered, so what only its requests use
 * is imported on first use: the answers' zod schemas (schemas.ts, a few milliseconds of zod to
 * build), and chat with its stream parser, uploads and downloads, which few sessions use.
 */
const schemas = lazy(() => import("./schemas.js"));
const chatCompletion = lazy(() => import("./chat-completion.js"));
const uploads = lazy(() => import("./uploads.js"));
const output = lazy(() => import("./output.js"));

export class ServiceClient {
  readonly baseUrl: string;
  private readonly http: ServiceHttp;
  private readonly timeoutMs: number | undefined;
  private readonly fetchOverride: FetchLike | undefined;
  /**
   * Removes this client's key, in every form the service might echo it, from a text. The key
   * itself stays private to the client: callers get this function, never the key.
   */
  readonly scrub: Scrub;
  /** The kinds of the assets this key's answers named (uploads, task outputs): see asset-kinds.ts. */
  readonly assets = new AssetKinds();
  /** The catalog's last parse, reused while the service answers the same bytes. */
  readonly #catalog: LastParse<ModelList>;

  constructor(opts: ClientOptions) {
    // The key is validated without echoing it: the message names the format only.
    // ApiKeySchema's test (schemas.ts), without building the schemas.
    if (typeof opts.apiKey !== "string" || !LIMITS.apiKeyPattern.test(opts.apiKey)) {
      throw new ArgumentError("apiKey", "must be `lgk_` followed by 64 lowercase hex digits");
    }
    // The base URL was checked where it was configured (src/config/values.ts); ServiceHttp,
    // which parses it, asserts only that it is http(s).
    // Built on first use (a few regular expressions): an engine is made on a user's first request
    // (engine.ts), and most of its texts are only ever scrubbed for key shapes.
    const apiKey = opts.apiKey;
    let scrubber: Scrub | undefined;
    this.scrub = (text) => {
      scrubber ??= keyScrubber(apiKey);
      return scrubber(text);
    };
    this.#catalog = opts.catalog ?? new LastParse<ModelList>();
    this.timeoutMs = opts.timeoutMs;
    this.fetchOverride = opts.fetch;
    this.http = new ServiceHttp({
      baseUrl: opts.baseUrl,
      apiKey: opts.apiKey,
      fetch: opts.fetch,
      timeoutMs: opts.timeoutMs,
      readRetries: opts.readRetries,
      random: opts.random,
      onKeyRefused: opts.onKeyRefused,
    });
    this.baseUrl = this.http.baseUrl;
  }

  async listModels(o: CallOptions = {}): Promise<ModelList> {
    const { ModelListSchema } = await schemas();
    const r = await this.http.json(
      { method: "GET", path: PATHS.models, kind: "read", signal: o.signal },
      ModelListSchema,
      this.#catalog,
    );
    return r.data;
  }

  async submitMedia(
    kind: MediaKind,
    bytes: string,
    idempotencyKey: string,
    o: CallOptions = {},
  ): Promise<{ httpStatus: number; submission: Submission }> {
    const { SubmissionSchema } = await schemas();
    if (kind !== "image" && kind !== "video" && kind !== "audio") {
      throw new ArgumentError("kind", "must be one of image, video, audio");
    }
    const r = await this.http.json(
      {
        method: "POST",
        path: endpointOf(kind),
        kind: "submission",
        headers: { ...JSON_HEADERS, "idempotency-key": checkIdentity(idempotencyKey) },
        body: checkBytes(bytes),
        signal: o.signal,
      },
      SubmissionSchema,
    );
    this.assets.noteTask(r.data.task);
    return { httpStatus: r.status, submission: r.data };
  }

  async getTask(taskId: string, o: CallOptions = {}): Promise<Task> {
    const { TaskEnvelopeSchema } = await schemas();
    const r = await this.http.json(
      { method: "GET", path: taskPath(taskId), kind: "read", signal: o.signal },
      TaskEnvelopeSchema,
    );
    this.assets.noteTask(r.data.task);
    return r.data.task;
  }

  /** Whether the task exists for this key: false on 404, an error on anything else. */
  async headTask(taskId: string, o: CallOptions = {}): Promise<boolean> {
    const status = await this.http.head({ path: taskPath(taskId), kind: "read", signal: o.signal });
    return status !== 404;
  }

  /** Raw-bytes upload; a file is streamed from disk, never held in memory. Never retried here. */
  async uploadAsset(
    src: AssetSource,
    o: { filename?: string | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<Asset> {
    const { AssetEnvelopeSchema } = await schemas();
    const prepared = await (await uploads()).prepareAsset(src, o.filename);
    const upload = await this.http.uploadFetch();
    const body = prepared.body(upload.recycle);
    const headers: Record<string, string> = { "content-type": prepared.mimeType };
    // fetch sets Content-Length itself for bytes; set by hand as well, undici sends it twice
    // ("70, 70") and refuses the request. Only a stream's length is ours to state, so the
    // upload is not sent chunked.
    if (body instanceof ReadableStream) headers["content-length"] = String(prepared.size);
    if (prepared.filename !== undefined) headers["x-filename"] = prepared.filename;
    const r = await this.http.json(
      {
        method: "POST",
        path: PATHS.assets,
        kind: "upload",
        headers,
        body,
        fetch: upload.fetch,
        signal: o.signal,
        timeoutMs: this.uploadTimeout(),
      },
      AssetEnvelopeSchema,
    );
    this.assets.noteUpload(r.data.asset);
    return r.data.asset;
  }

  async listVoices(q: VoiceListQuery = {}, o: CallOptions = {}): Promise<VoiceList> {
    const { parseOrThrow, VoiceListQuerySchema, VoiceListSchema } = await schemas();
    const query = parseOrThrow(VoiceListQuerySchema, q);
    const params = new URLSearchParams();
    if (query.scope !== undefined) params.set("scope", query.scope);
    if (query.page !== undefined) params.set("page", String(query.page));
    if (query.language !== undefined) params.set("language", query.language);
    const qs = params.size > 0 ? `?${params}` : "";
    const r = await this.http.json(
      { method: "GET", path: `${PATHS.voices}${qs}`, kind: "read", signal: o.signal },
      VoiceListSchema,
    );
    return r.data;
  }

  /** Multipart upload of a recording; the file is a disk-backed Blob, streamed by fetch. */
  async uploadVoice(v: VoiceSource, o: CallOptions = {}): Promise<Voice> {
    const { VoiceEnvelopeSchema } = await schemas();
    const prepared = await (await uploads()).prepareVoice(v);
    const form = await this.http.formData();
    form.append("file", prepared.blob, prepared.filename);
    form.append("duration", String(v.duration));
    form.append("rightsConfirmed", "true");
    const r = await this.http.json(
      {
        method: "POST",
        path: PATHS.voices,
        kind: "upload",
        body: form,
        signal: o.signal,
        timeoutMs: this.uploadTimeout(),
      },
      VoiceEnvelopeSchema,
    );
    return r.data.voice;
  }

  /** One chat submission; streams when the body says `"stream":true`. Never retried here. */
  async chat(
    bytes: string,
    idempotencyKey: string,
    o: CallOptions & { onDelta?: ((delta: string, soFar: string) => void) | undefined } = {},
  ): Promise<ChatResult> {
    const body = checkBytes(bytes);
    const identity = checkIdentity(idempotencyKey);
    return (await chatCompletion()).sendChat(this.http, body, identity, o);
  }

  async extractVideo(
    bytes: string,
    idempotencyKey: string,
    o: CallOptions = {},
  ): Promise<ExtractionResponse> {
    const { ExtractionResponseSchema } = await schemas();
    const r = await this.http.json(
      {
        method: "POST",
        path: PATHS.extraction,
        kind: "submission",
        headers: { ...JSON_HEADERS, "idempotency-key": checkIdentity(idempotencyKey) },
        body: checkBytes(bytes),
        signal: o.signal,
      },
      ExtractionResponseSchema,
    );
    return r.data;
  }

  /**
   * Downloads a signed output URL. It never carries the key (the URL is its own
   * credential and usually lives on another host), and stops past `maxBytes`.
   */
  async fetchOutput(
    url: string,
    o: { signal?: AbortSignal | undefined; maxBytes?: number | undefined } = {},
  ): Promise<{ bytes: Uint8Array; mimeType: string }> {
    const { downloadOutput } = await output();
    return downloadOutput(url, {
      fetch: this.fetchOverride ?? (await this.http.fetchImpl()),
      timeoutMs: this.timeoutMs,
      maxBytes: o.maxBytes ?? DEFAULT_OUTPUT_MAX_BYTES,
      signal: o.signal,
      retrying: (spec, attempt) => this.http.retrying(spec, attempt),
    });
  }

  private uploadTimeout(): number {
    return (this.timeoutMs ?? DEFAULT_TIMEOUT_MS) * UPLOAD_TIMEOUT_FACTOR;
  }
}

export type { AssetSource, VoiceSource };

/**
 * The stdio wire under the SDK's transport: lines in, bounded; responses out, with delivery.
 * - A line over the message cap is refused with a JSON-RPC error and skipped up to its newline, so
 *   one oversized message cannot end the connection and every call in flight with it.
 * - A response counts as delivered only once its stdout write completed (docs/idempotency.md#delivery).
 */
import { Transform, type TransformCallback, type Writable } from "node:stream";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import type { WireHooks } from "./stdio-task-listens.js";

const NEWLINE = 0x0a;
/** How much of a refused line is kept to find its request ID. */
const ID_SCAN_BYTES = 4096;

/** The top-level `id` of a JSON-RPC message, read from the start of its line when it comes before `params`. */
export function leadingId(prefix: string): RequestId | null {
  const params = prefix.indexOf('"params"');
  const head = params === -1 ? prefix : prefix.slice(0, params);
  const match = /"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,256}")/.exec(head);
  if (match?.[1] === undefined) return null;
  return match[1].startsWith('"') ? (JSON.parse(match[1]) as string) : Number(match[1]);
}

/**
 * Passes whole lines through, one push per line; a line longer than `maxBytes` is dropped as it
 * streams (never held whole) and reported once with the start of it.
 */
export class LineGuard extends Transform {
  readonly #max: number;
  readonly #onOversized: (prefix: string) => void;
  #parts: Buffer[] = [];
  #size = 0;
  #skipping = false;
  #prefix = "";

  constructor(maxBytes: number, onOversized: (prefix: string) => void) {
    super();
    this.#max = maxBytes;
    this.#onOversized = onOversized;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      this.#take(chunk.subarray(start, end));
      if (nl === -1) break;
      this.#endLine();
      start = nl + 1;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.#size > 0 && !this.#skipping) this.push(Buffer.concat(this.#parts, this.#size));
    done();
  }

  #take(part: Buffer): void {
    if (this.#skipping || part.length === 0) return;
    if (this.#size + part.length > this.#max) {
      this.#prefix = Buffer.concat([...this.#parts, part])
        .subarray(0, ID_SCAN_BYTES)
        .toString("utf8");
      this.#parts = [];
      this.#size = 0;
      this.#skipping = true;
      return;
    }
    // A view of the chunk, not a copy: a stream never reuses a chunk it handed out, and the line is
    // copied once, whole, when it ends.
    this.#parts.push(part);
    this.#size += part.length;
  }

  #endLine(): void {
    if (this.#skipping) {
      this.#skipping = false;
      this.#onOversized(this.#prefix);
      this.#prefix = "";
      return;
    }
    this.#parts.push(Buffer.from("\n"));
    this.push(Buffer.concat(this.#parts, this.#size + 1));
    this.#parts = [];
    this.#size = 0;
  }
}

export interface WireOptions {
  maxMessageBytes: number;
  /** The response to this request was written to stdout. */
  onWritten(id: RequestId): void;
  /** The response to this request could not be written. */
  onLost(id: RequestId): void;
}

/**
 * StdioServerTransport over a LineGuard, whose responses report when they were written; `hooks`
 * (stdio-task-listens.ts) see each message read before the SDK does and each one it sends.
 */
export class DeliveringStdioTransport extends StdioServerTransport {
  readonly #out: Writable;
  readonly #o: WireOptions;
  #ended = false;
  #hooks: WireHooks | undefined;
  #sdk: ((message: JSONRPCMessage) => void) | undefined;

  constructor(input: NodeJS.ReadableStream, out: Writable, o: WireOptions) {
    let refuse = (_prefix: string) => {};
    const guard = new LineGuard(o.maxMessageBytes, (prefix) => refuse(prefix));
    input.pipe(guard);
    // The guard hands over whole lines only, each within the cap.
    super(guard, out, { maxBufferSize: o.maxMessageBytes + 1 });
    this.#out = out;
    this.#o = o;
    refuse = (prefix) => this.#refuse(prefix);
    // The base class keeps the SDK's handler in an own field: replaced by an accessor that lets
    // the hooks see each message first.
    Object.defineProperty(this, "onmessage", {
      configurable: true,
      enumerable: true,
      get: () => (this.#sdk === undefined ? undefined : (m: JSONRPCMessage) => this.#read(m)),
      set: (handler: ((message: JSONRPCMessage) => void) | undefined) => {
        this.#sdk = handler;
      },
    });
  }

  /** Hooks around the SDK's messages (set once, before the connection starts). */
  useHooks(hooks: WireHooks): void {
    this.#hooks = hooks;
  }

  /** Hands the SDK a message as if it had been read. */
  deliver(message: JSONRPCMessage): void {
    this.#sdk?.(message);
  }

  #read(message: JSONRPCMessage): void {
    this.#hooks?.inbound(message);
    this.#sdk?.(message);
  }

  override async close(): Promise<void> {
    this.#ended = true;
    this.#hooks?.close();
    return super.close();
  }

  override async send(message: JSONRPCMessage): Promise<void> {
    if (this.#hooks === undefined) return this.write(message);
    const out = await this.#hooks.outbound(message);
    if (out.message !== undefined) await this.write(out.message);
    out.written?.();
  }

  /** Writes a message past the hooks. */
  write(message: JSONRPCMessage): Promise<void> {
    // A response, by its shape: the SDK built and checked the message, and its own is-a-response
    // tests parse the whole result (structuredContent and all) again.
    const id = "result" in message || "error" in message ? message.id : undefined;
    if (id === undefined) return super.send(message);
    if (this.#ended) {
      this.#o.onLost(id);
      return Promise.reject(new Error("StdioServerTransport is closed"));
    }
    return new Promise((resolve, reject) => {
      // The write callback fires once the bytes are handed to the pipe (or failed): only then is
      // the response delivered.
      this.#out.write(`${JSON.stringify(message)}\n`, (error) => {
        if (error) {
          this.#o.onLost(id);
          reject(error);
        } else {
          this.#o.onWritten(id);
          resolve();
        }
      });
    });
  }

  #refuse(prefix: string): void {
    const error = {
      jsonrpc: "2.0",
      id: leadingId(prefix),
      error: {
        code: -32600,
        message: `Invalid Request: the message is larger than ${this.#o.maxMessageBytes} bytes and was skipped; send large media with upload_asset's path instead of base64 data`,
      },
    };
    if (!this.#ended) this.#out.write(`${JSON.stringify(error)}\n`);
  }
}

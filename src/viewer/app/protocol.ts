/**
 * The view's side of the MCP Apps protocol: JSON-RPC 2.0 over postMessage with the host
 * (ui/initialize, then tool input and results as notifications; tools/call, resources/read and
 * ui/download-file as requests). Written against the ext-apps SDK's types rather than with its
 * App class: the class brings zod and the MCP client, over 400 KB once bundled, and this page
 * must stay under 150 KB (see docs/viewer.md#how-it-is-built).
 */
import type {
  McpUiHostCapabilities,
  McpUiHostContext,
  McpUiHostContextChangedNotification,
  McpUiInitializedNotification,
  McpUiInitializeRequest,
  McpUiInitializeResult,
  McpUiResourceTeardownRequest,
  McpUiSizeChangedNotification,
  McpUiToolCancelledNotification,
  McpUiToolInputNotification,
  McpUiToolResultNotification,
} from "@modelcontextprotocol/ext-apps";

// Method names typed by the SDK's own declarations, so a misspelling fails the typecheck.
const INITIALIZE: McpUiInitializeRequest["method"] = "ui/initialize";
const INITIALIZED: McpUiInitializedNotification["method"] = "ui/notifications/initialized";
const TOOL_INPUT: McpUiToolInputNotification["method"] = "ui/notifications/tool-input";
const TOOL_RESULT: McpUiToolResultNotification["method"] = "ui/notifications/tool-result";
const TOOL_CANCELLED: McpUiToolCancelledNotification["method"] = "ui/notifications/tool-cancelled";
const CONTEXT_CHANGED: McpUiHostContextChangedNotification["method"] =
  "ui/notifications/host-context-changed";
const SIZE_CHANGED: McpUiSizeChangedNotification["method"] = "ui/notifications/size-changed";
const TEARDOWN: McpUiResourceTeardownRequest["method"] = "ui/resource-teardown";
/** The protocol revision of the ext-apps SDK this view was written against. */
const PROTOCOL_VERSION = "2026-01-26";

export type ToolResult = McpUiToolResultNotification["params"];
export type ToolInput = McpUiToolInputNotification["params"];
export type HostContext = McpUiHostContext;

interface Message {
  jsonrpc: "2.0";
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

export interface HostHandlers {
  toolInput(params: ToolInput): void;
  toolResult(params: ToolResult): void;
  contextChanged(context: HostContext): void;
  /** The tool call ended without a result (cancelled, or cut off by the host). */
  toolCancelled(reason: string | undefined): void;
  /** The host is about to remove the view. */
  teardown(): void;
}

export class Host {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(r: unknown): void; reject(e: Error): void }>();
  capabilities: McpUiHostCapabilities = {};
  context: HostContext = {};

  constructor(
    private readonly handlers: HostHandlers,
    private readonly target: Window = window.parent,
  ) {
    window.addEventListener("message", (event) => {
      // Only the frame that embeds this view speaks for the host.
      if (event.source !== this.target) return;
      const data = event.data as Message | undefined;
      if (data?.jsonrpc === "2.0") this.receive(data);
    });
  }

  async connect(appInfo: { name: string; version: string }): Promise<void> {
    const params: McpUiInitializeRequest["params"] = {
      appInfo,
      appCapabilities: {},
      protocolVersion: PROTOCOL_VERSION,
    };
    const result = (await this.request(INITIALIZE, params)) as McpUiInitializeResult;
    this.capabilities = result.hostCapabilities ?? {};
    this.context = result.hostContext ?? {};
    this.handlers.contextChanged(this.context);
    this.notify(INITIALIZED, {});
  }

  request(method: string, params: object, timeoutMs = 120_000): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: the host did not answer within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.post({ jsonrpc: "2.0", id, method, params: params as Record<string, unknown> });
    });
  }

  notify(method: string, params: object): void {
    this.post({ jsonrpc: "2.0", method, params: params as Record<string, unknown> });
  }

  /** Tells the host how tall the view is, so its frame fits (the host may ignore it). */
  reportSize(width: number, height: number): void {
    this.notify(SIZE_CHANGED, { width, height } satisfies McpUiSizeChangedNotification["params"]);
  }

  private post(message: Message): void {
    this.target.postMessage(message, "*");
  }

  private receive(m: Message): void {
    if (m.method === undefined) {
      const waiting = typeof m.id === "number" ? this.pending.get(m.id) : undefined;
      if (!waiting) return;
      this.pending.delete(m.id as number);
      if (m.error) waiting.reject(new Error(m.error.message));
      else waiting.resolve(m.result ?? {});
      return;
    }
    if (m.id !== undefined) {
      // Requests from the host: teardown and ping need only an acknowledgement.
      const known = m.method === TEARDOWN || m.method === "ping";
      if (m.method === TEARDOWN) this.handlers.teardown();
      this.post(
        known
          ? { jsonrpc: "2.0", id: m.id, result: {} }
          : { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } },
      );
      return;
    }
    const params = m.params ?? {};
    if (m.method === TOOL_INPUT) this.handlers.toolInput(params as ToolInput);
    else if (m.method === TOOL_RESULT) this.handlers.toolResult(params as ToolResult);
    else if (m.method === TOOL_CANCELLED) {
      const reason = (params as McpUiToolCancelledNotification["params"]).reason;
      this.handlers.toolCancelled(typeof reason === "string" ? reason : undefined);
    } else if (m.method === CONTEXT_CHANGED) {
      this.context = { ...this.context, ...(params as HostContext) };
      this.handlers.contextChanged(this.context);
    }
  }
}

/**
 * Raw JSON-RPC on the 2026-07-28 Streamable HTTP wire, as Claude Code sends it to run MCP Tasks
 * (the SDK's client cannot consume a `resultType: "task"` answer): the per-request `_meta` envelope,
 * `Mcp-Method` and `Mcp-Name` headers, and the tasks extension declared per request when asked.
 */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

export interface RpcOptions {
  /** Bearer key (the session key of --auth key); none: the server's default key. */
  key?: string;
  /** Declare the tasks extension on this request. */
  tasks?: boolean;
  /** Other client capabilities to declare (elicitation, …). */
  capabilities?: Record<string, unknown>;
  /** The fetch to send with (one trusting a test's TLS front); default the global one. */
  fetch?: (url: string, init?: RequestInit) => Promise<Response>;
}

export interface RpcAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: raw wire answers are read field by field.
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

let nextId = 1;

export function envelope(o: RpcOptions = {}): Record<string, unknown> {
  const capabilities: Record<string, unknown> = { ...(o.capabilities ?? {}) };
  if (o.tasks) capabilities.extensions = { [TASKS_EXTENSION]: {} };
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "tasks-wire", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  };
}

/** One request; the answer's JSON-RPC result or error, and the HTTP status. */
export async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown>,
  o: RpcOptions = {},
): Promise<RpcAnswer> {
  const name = (params.name ?? params.taskId ?? params.uri) as string | undefined;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
    ...(name === undefined ? {} : { "mcp-name": name }),
    ...(o.key === undefined ? {} : { authorization: `Bearer ${o.key}` }),
  };
  const body = { jsonrpc: "2.0", id: nextId++, method, params: { ...params, _meta: envelope(o) } };
  const response = await (o.fetch ?? fetch)(url, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await response.text();
  const json = JSON.parse(text.startsWith("event:") || text.startsWith("data:") ? sseData(text) : text);
  return { status: response.status, result: json.result, error: json.error };
}

function sseData(text: string): string {
  const line = text.split("\n").find((l) => l.startsWith("data:"));
  return line?.slice(5).trim() ?? "{}";
}

export const callTool = (url: string, name: string, args: Record<string, unknown>, o: RpcOptions = {}) =>
  rpc(url, "tools/call", { name, arguments: args }, o);

/**
 * Polls `tasks/get` at the `pollIntervalMs` each answer gives, as Claude Code does, until the task
 * is terminal (or `timeoutMs`); every answer seen, in order.
 */
export async function pollTask(
  url: string,
  taskId: string,
  o: RpcOptions & { timeoutMs?: number } = {},
): Promise<{ final: RpcAnswer; seen: RpcAnswer[] }> {
  const seen: RpcAnswer[] = [];
  const until = Date.now() + (o.timeoutMs ?? 60_000);
  for (;;) {
    const answer = await rpc(url, "tasks/get", { taskId }, { ...o, tasks: true });
    seen.push(answer);
    if (answer.error !== undefined || answer.result?.status !== "working") return { final: answer, seen };
    if (Date.now() > until) throw new Error(`task ${taskId} still working after ${o.timeoutMs ?? 60_000} ms`);
    await new Promise((r) => setTimeout(r, answer.result.pollIntervalMs));
  }
}

/** The text blocks of a tool result, joined. */
export const textOf = (result: { content?: { type: string; text?: string }[] }): string =>
  (result.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");

/**
 * A 2026-07-28 tools/call of list_models padded with `mib` MiB that no tool accepts (a large body
 * for admission tests and the hostile bench): its JSON, and the headers that name it.
 */
export function paddedCall(mib: number): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: {
      name: "list_models",
      arguments: { pad: "x".repeat(mib * 1024 * 1024) },
      _meta: { ...envelope(), "io.modelcontextprotocol/clientInfo": { name: "hog", version: "1" } },
    },
  });
  const headers = {
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "list_models",
  };
  return { body, headers };
}

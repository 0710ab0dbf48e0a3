/**
 * Raw JSON-RPC on the 2025-11-25 Streamable HTTP wire, as VS Code and the MCP Inspector speak it:
 * `initialize` opens a session (`Mcp-Session-Id`), then every request carries it. MCP Tasks in that
 * revision's form: `params.task` on tools/call, then tasks/get, tasks/result, tasks/list,
 * tasks/cancel.
 */
import type { RpcAnswer } from "./tasks-wire.js";

export const PROTOCOL_2025 = "2025-11-25";

export interface Session2025 {
  /** The `initialize` answer's result. */
  // biome-ignore lint/suspicious/noExplicitAny: raw wire answers are read field by field.
  init: any;
  request(method: string, params?: Record<string, unknown>): Promise<RpcAnswer>;
  /** The session's ID, as `initialize` answered it. */
  sessionId(): string | undefined;
}

let nextId = 1;

function parse(text: string): { result?: unknown; error?: RpcAnswer["error"] } {
  if (!(text.startsWith("event:") || text.startsWith("data:"))) return JSON.parse(text);
  // An SSE answer: the message that answers the request (progress notifications come first).
  const datas = text
    .split("\n")
    .filter((l) => l.startsWith("data:"))
    .map((l) => JSON.parse(l.slice(5).trim()) as Record<string, unknown>);
  return datas.find((d) => "result" in d || "error" in d) ?? {};
}

/** Opens a 2025-11-25 session at `url` (bearer `key`, when given) with these client capabilities. */
export async function session2025(
  url: string,
  o: { key?: string; capabilities?: Record<string, unknown> } = {},
): Promise<Session2025> {
  let sessionId: string | undefined;
  const post = async (body: Record<string, unknown>) => {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": PROTOCOL_2025,
      ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId }),
      ...(o.key === undefined ? {} : { authorization: `Bearer ${o.key}` }),
    };
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
    sessionId ??= response.headers.get("mcp-session-id") ?? undefined;
    const text = await response.text();
    return { status: response.status, text };
  };
  const request = async (method: string, params: Record<string, unknown> = {}): Promise<RpcAnswer> => {
    const { status, text } = await post({ jsonrpc: "2.0", id: nextId++, method, params });
    const json = parse(text);
    return { status, result: json.result, ...(json.error === undefined ? {} : { error: json.error }) };
  };
  const init = await request("initialize", {
    protocolVersion: PROTOCOL_2025,
    capabilities: o.capabilities ?? {},
    clientInfo: { name: "tasks-wire-2025", version: "1.0.0" },
  });
  if (init.error !== undefined) throw new Error(`initialize failed: ${init.error.message}`);
  await post({ jsonrpc: "2.0", method: "notifications/initialized" });
  return { init: init.result, request, sessionId: () => sessionId };
}

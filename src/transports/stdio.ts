/**
 * MCP over stdio. stdout carries protocol messages and nothing else: one stray byte there and hosts
 * such as Claude Desktop drop the connection. So console output meant for humans is sent to stderr
 * before anything else runs, and the server exits when the client closes stdin.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { Channel } from "../mcp/delivery.js";
import type { TaskFeed } from "../mcp/mcp-task-wire-listen.js";
import { StdioTaskListens } from "./stdio-task-listens.js";
import { DeliveringStdioTransport } from "./stdio-wire.js";

/** Same bound as HTTP: a 30 MiB asset as base64 `data` is about 40 MiB on one line. */
export const MAX_MESSAGE_BYTES = 48 * 1024 * 1024;

/** Route every console method that would write to stdout to stderr instead. */
export function keepStdoutForProtocol(): void {
  const toStderr = console.error.bind(console);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  console.trace = toStderr;
  console.dir = (item: unknown) => toStderr(item);
  console.table = (data: unknown) => toStderr(data);
}

export interface StdioOptions {
  /** One server for the connection (the SDK may also build a throwaway one for a 2026-07-28 probe). */
  createServer(channel: Channel): McpServer | Promise<McpServer>;
  /** How a listen naming tasks follows them (the surface's taskFeedFor over the connection's engine). */
  taskFeed?: TaskFeed;
  /** Called once when the connection ends (stdin closed, SIGINT, SIGTERM); release the ledger here. */
  onClose?(): Promise<void>;
}

export function serveOverStdio(o: StdioOptions): void {
  keepStdoutForProtocol();
  // One connection, one request-ID space: every server built for it shares its delivery channel.
  const channel = new Channel();
  const transport = new DeliveringStdioTransport(process.stdin, process.stdout, {
    maxMessageBytes: MAX_MESSAGE_BYTES,
    onWritten: (id) => channel.written(id),
    onLost: (id) => channel.lost(id),
  });
  // The tasks a 2026-07-28 listen names are followed on the connection (stdio-task-listens.ts).
  if (o.taskFeed !== undefined)
    transport.useHooks(
      new StdioTaskListens(
        o.taskFeed,
        (m) => transport.write(m),
        (m) => transport.deliver(m),
      ),
    );
  const handle = serveStdio(() => o.createServer(channel), {
    transport,
    onerror: (error) => console.error(`generation-mcp: ${error.message}`),
  });
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    // Whatever still holds the event loop (a socket, a timer) gets two seconds, then we leave anyway.
    setTimeout(() => process.exit(0), 2_000).unref();
    void handle
      .close()
      .catch(() => {})
      // Delivery marks of answers already written go to the ledger before it closes.
      .then(() => channel.idle())
      .then(() => o.onClose?.())
      .catch((error: unknown) => console.error(`generation-mcp: while closing: ${String(error)}`))
      .finally(() => process.exit(0));
  };
  process.stdin.once("end", shutdown);
  process.stdin.once("close", shutdown);
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

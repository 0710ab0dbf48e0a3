// The floor: the MCP SDK over stdio with zod-described tools and nothing else. bench/server.ts times
// its cold start next to our CLI, and its `generate_image` (the same POST our paid call makes, with a
// fresh Idempotency-Key and no ledger, budget or presentation) and `list_models` (the same GET, the
// service's answer returned as it came) next to ours, so each comparison holds whatever the
// machine's load. With MINIMAL_DURABLE_DB set, its generate_image first stores the identity and
// body in one SQLite commit synced to disk (WAL, synchronous=FULL), as the service's interface asks
// of every client before dispatch: the floor for any server that keeps that rule.
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

const durable = process.env.MINIMAL_DURABLE_DB ? openDurable(process.env.MINIMAL_DURABLE_DB) : undefined;

function openDurable(path) {
  const db = new (process.getBuiltinModule("node:sqlite").DatabaseSync)(path);
  db.exec("PRAGMA journal_mode=WAL");
  db.exec("PRAGMA synchronous=FULL");
  db.exec("CREATE TABLE IF NOT EXISTS claims(identity TEXT PRIMARY KEY, body TEXT NOT NULL)");
  return db.prepare("INSERT INTO claims(identity, body) VALUES (?, ?)");
}

const server = new McpServer({ name: "minimal", version: "1.0.0" });
server.registerTool(
  "echo",
  { description: "Echoes its text.", inputSchema: z.object({ text: z.string() }) },
  async ({ text }) => ({
    content: [{ type: "text", text }],
  }),
);
server.registerTool(
  "generate_image",
  {
    description: "Submits an image generation and returns the service's answer.",
    inputSchema: z.object({ model: z.string(), prompt: z.string(), wait: z.number().optional() }),
  },
  async ({ model, prompt }) => {
    const identity = randomUUID();
    const body = JSON.stringify({ model, prompt });
    durable?.run(identity, body);
    const res = await fetch(`${process.env.GENERATION_BASE_URL}/api/generate/image`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${process.env.GENERATION_API_KEY}`,
        "content-type": "application/json",
        "idempotency-key": identity,
      },
      body,
    });
    const text = await res.text();
    return { content: [{ type: "text", text }], isError: !res.ok };
  },
);
server.registerTool(
  "list_models",
  {
    description: "Lists the service's models as the service answered.",
    inputSchema: z.object({ kind: z.string().optional() }),
  },
  async () => {
    const res = await fetch(`${process.env.GENERATION_BASE_URL}/api/generate/models`, {
      headers: { authorization: `Bearer ${process.env.GENERATION_API_KEY}` },
    });
    const text = await res.text();
    return { content: [{ type: "text", text }], isError: !res.ok };
  },
);
await server.connect(new StdioServerTransport());

// The floor for cold start: the MCP SDK over stdio with one zod-described tool and nothing else.
// bench/server.ts times it next to our CLI, so the comparison holds whatever the machine's load.
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

const server = new McpServer({ name: "minimal", version: "1.0.0" });
server.registerTool(
  "echo",
  { description: "Echoes its text.", inputSchema: z.object({ text: z.string() }) },
  async ({ text }) => ({
    content: [{ type: "text", text }],
  }),
);
await server.connect(new StdioServerTransport());

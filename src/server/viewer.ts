/**
 * The media viewer (MCP Apps): the `ui://generation/viewer` resource, served from memory, and the
 * two app-only tools the view calls (hidden from the model by `visibility: ["app"]`). The view's
 * HTML and the tools' code load on first use: tools/list and resources/list need neither.
 */
import { RESOURCE_MIME_TYPE, registerAppResource } from "@modelcontextprotocol/ext-apps/server";
import type { McpServer } from "@modelcontextprotocol/server";
import type { Engine } from "../tooling/context.js";
import { type ListedTool, registerTool } from "../tooling/tool.js";
import { VIEWER_URI } from "../tooling/viewer-link.js";

/** Largest chunk the view reads at once: base64 grows it by a third, still under hosts' 1 MB results. */
export const CHUNK_MAX_BYTES = 512 * 1024;

/**
 * What tools/list shows of the app-only tools, precomputed like tools/catalog.ts so listing them
 * loads no zod; test/viewer keeps it equal to the definitions in viewer-tools.ts.
 */
export const VIEWER_TOOLS: readonly ListedTool[] = [
  {
    name: "viewer_read_task",
    title: "Read a task for the viewer",
    description:
      "Used by the media viewer only: reads a task once (status, Gems, outputs with fresh signed URLs) so the view can refresh a running task. Free: it spends no Gems.",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        taskId: {
          type: "string",
          minLength: 1,
          maxLength: 256,
          description: "Task ID shown by the viewer.",
        },
      },
      required: ["taskId"],
      additionalProperties: false,
    },
    outputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        task: {
          type: "object",
          properties: {},
          additionalProperties: {},
          description: "The service's task as it stands (as poll_task returns it).",
        },
        terminal: {
          type: "boolean",
          description: "True once the task is succeeded, partial, failed or cancelled.",
        },
      },
      required: ["task", "terminal"],
      additionalProperties: false,
    },
    annotations: {
      title: "Read a task for the viewer",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    },
    _meta: {
      ui: {
        resourceUri: "ui://generation/viewer",
        visibility: ["app"],
      },
      "ui/resourceUri": "ui://generation/viewer",
    },
  },
  {
    name: "viewer_read_output",
    title: "Read an output's bytes for the viewer",
    description:
      "Used by the media viewer only: reads up to 524288 bytes of a task output from `offset`, base64, through a freshly signed URL, for hosts whose media or result size limits keep the view from loading it whole. Free: it spends no Gems.",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        taskId: {
          type: "string",
          minLength: 1,
          maxLength: 256,
          description: "Task ID shown by the viewer.",
        },
        index: {
          type: "integer",
          minimum: 0,
          maximum: 1000,
          description: "Output index (0 to 1000).",
        },
        offset: {
          type: "integer",
          minimum: 0,
          maximum: 9007199254740991,
          description: "First byte to read (0 or more).",
        },
      },
      required: ["taskId", "index", "offset"],
      additionalProperties: false,
    },
    outputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        mimeType: {
          type: "string",
          description: "The output's MIME type.",
        },
        offset: {
          type: "integer",
          minimum: -9007199254740991,
          maximum: 9007199254740991,
          description: "First byte of this chunk.",
        },
        total: {
          type: "integer",
          minimum: -9007199254740991,
          maximum: 9007199254740991,
          description: "Size of the whole output in bytes.",
        },
        data: {
          type: "string",
          description: "The chunk's bytes, base64.",
        },
        done: {
          type: "boolean",
          description: "True when this chunk ends the output.",
        },
      },
      required: ["mimeType", "offset", "total", "data", "done"],
      additionalProperties: false,
    },
    annotations: {
      title: "Read an output's bytes for the viewer",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    },
    _meta: {
      ui: {
        resourceUri: "ui://generation/viewer",
        visibility: ["app"],
      },
      "ui/resourceUri": "ui://generation/viewer",
    },
  },
];

export interface ViewerOptions {
  /** Origins the view may load media from directly (CSP `resourceDomains`). */
  mediaOrigins: readonly string[];
}

/** The origins of the base URL and any configured ones, deduplicated; placeholders left out. */
export function mediaOrigins(urls: readonly string[]): string[] {
  const origins = new Set<string>();
  for (const url of urls) {
    try {
      const { origin, hostname } = new URL(url);
      if (origin !== "null" && !hostname.endsWith(".invalid")) origins.add(origin);
    } catch {
      // Configuration is validated at startup; an unparsable value here just grants nothing.
    }
  }
  return [...origins];
}

export function registerViewer(server: McpServer, engine: Engine, o: ViewerOptions): void {
  // The view fetches nothing itself (connectDomains stays empty); media come from these origins,
  // from blob: URLs of bytes read through the host, or not at all.
  const csp = { resourceDomains: [...o.mediaOrigins] };
  registerAppResource(
    server,
    "Media viewer",
    VIEWER_URI,
    {
      title: "Media viewer",
      description:
        "Shows a task's images, audio and video beside the result, follows a running task until it ends, and saves or downloads outputs (MCP Apps view).",
      _meta: { ui: { csp, prefersBorder: true } },
    },
    async (uri) => {
      const { viewerHtml } = await import("../viewer/html.js");
      return {
        contents: [
          { uri: uri.href, mimeType: RESOURCE_MIME_TYPE, text: await viewerHtml(), _meta: { ui: { csp } } },
        ],
      };
    },
  );
  for (const listed of VIEWER_TOOLS) {
    registerTool(server, engine, listed, async () => {
      const def = (await import("./viewer-tools.js")).VIEWER_TOOL[listed.name];
      if (!def)
        throw new Error(`server/viewer.ts lists ${listed.name}, which viewer-tools.ts does not define`);
      return def;
    });
  }
}

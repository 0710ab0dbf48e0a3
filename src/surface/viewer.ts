/**
 * The media viewer (MCP Apps): the `ui://generation/viewer` resource, served from memory, and the
 * app-only tools the view calls (hidden from the model by `visibility: ["app"]`). The view's
 * HTML and the tools' code load on first use: tools/list and resources/list need neither.
 */
import { createHash } from "node:crypto";
import { RESOURCE_MIME_TYPE, registerAppResource } from "@modelcontextprotocol/ext-apps/server";
import type { ClientCapabilities, McpServer } from "@modelcontextprotocol/server";
import { rendersApps } from "../mcp/context.js";
import type { ListedTool, ToolEntry } from "../mcp/define-tool.js";
import { VIEWER_URI } from "../mcp/viewer-link.js";
import { lazy } from "../shared/lazy.js";
import { VIEWER_TOOLS } from "./viewer-catalog.js";

export interface ViewerOptions {
  /** Origins the view may load media from directly (CSP `resourceDomains`). */
  mediaOrigins: readonly string[];
  /** The URL users reach (GENERATION_PUBLIC_URL), where known. */
  publicUrl?: string | undefined;
}

/**
 * The sandbox origin claude.ai serves a view from for this server (`_meta.ui.domain`): the first 32
 * hex digits of the SHA-256 of the server's MCP URL, under claudemcpcontent.com (Claude's connector
 * docs, "MCP Apps: getting started"). The MCP URL is `<origin>/mcp`, as the OAuth resource is
 * (src/transports/oauth/oauth-gate.ts). Unknown without a public URL: a wrong domain is worse than
 * none (a host then lets the view load nothing), so none is named.
 */
export function claudeDomain(publicUrl: string | undefined): string | undefined {
  if (publicUrl === undefined) return undefined;
  let origin: string;
  try {
    origin = new URL(publicUrl).origin;
  } catch {
    return undefined;
  }
  const hash = createHash("sha256").update(`${origin}/mcp`).digest("hex").slice(0, 32);
  return `${hash}.claudemcpcontent.com`;
}

/**
 * The origins of the base URL and any configured ones, deduplicated; a `.invalid` host (RFC 6761:
 * never resolves, as the in-process test harness uses) grants nothing and is left out.
 */
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

/**
 * The app-only tools as tools/list shows them to a client: only to one that renders the view, since
 * no one else can call them usefully and every client pays for each listed byte. They stay callable
 * by name, for a host that renders the view without declaring the extension.
 */
export function viewerToolsFor(caps: ClientCapabilities | undefined): readonly ListedTool[] {
  return rendersApps(caps) ? VIEWER_TOOLS : [];
}

// The app-only tools' code and the view's page: loaded on first use, not with the server.
const viewerTools = lazy(() => import("./viewer-tools.js"));
const viewerPage = lazy(() => import("../viewer/html.js"));

/** The app-only tools as every server answers them (assemble.ts): their code loads on first call. */
export const VIEWER_TOOL_ENTRIES: readonly ToolEntry[] = VIEWER_TOOLS.map((listed) => ({
  listed,
  load: async () => {
    const def = (await viewerTools()).VIEWER_TOOL[listed.name];
    if (!def)
      throw new Error(`surface/viewer.ts lists ${listed.name}, which viewer-tools.ts does not define`);
    return def;
  },
}));

export function registerViewer(server: McpServer, o: ViewerOptions): void {
  // The view fetches nothing itself (connectDomains stays empty); media come from these origins,
  // from blob: URLs of bytes read through the host, or not at all.
  const csp = { resourceDomains: [...o.mediaOrigins] };
  const domain = claudeDomain(o.publicUrl);
  // The domain is Claude's own scheme: named to Claude's hosts only, when they read the view. Another
  // host that honours `ui.domain` (the MCP Inspector does) would serve the view from an origin that
  // is not its own, and show nothing.
  const ui = { csp };
  const uiFor = () => {
    const client = server.server.getClientVersion()?.name ?? "";
    return domain !== undefined && /^claude/i.test(client) ? { ...ui, domain } : ui;
  };
  registerAppResource(
    server,
    "Media viewer",
    VIEWER_URI,
    {
      title: "Media viewer",
      description:
        "Shows a task's images, audio and video beside the result, follows a running task until it ends, and saves or downloads outputs (MCP Apps view).",
      _meta: { ui: { ...ui, prefersBorder: true } },
    },
    async (uri) => {
      const { viewerHtml } = await viewerPage();
      return {
        contents: [
          { uri: uri.href, mimeType: RESOURCE_MIME_TYPE, text: await viewerHtml(), _meta: { ui: uiFor() } },
        ],
      };
    },
  );
}

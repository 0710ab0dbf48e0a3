/**
 * The media viewer (an MCP Apps view, see docs/viewer.md): its resource URI,
 * and the `_meta` that links a tool to it. Hosts that render MCP Apps show the view beside the
 * tool's result; others ignore the link and show the result as it is.
 */
export const VIEWER_URI = "ui://generation/viewer";

/**
 * Both forms of the link, as ext-apps' `registerAppTool` emits them: `ui.resourceUri` of the Apps
 * specification (2026-01-26), which ext-apps 2.x hosts read, and the flat `ui/resourceUri` of the
 * drafts, the only one claude.ai has been seen to mount a view from (anthropics/claude-ai-mcp#71).
 * Its 42 bytes per linked tool fit in the 20,000 a tools/list is held to (test/tools/tool-listing.test.ts).
 */
export const VIEWER_LINK: Record<string, unknown> = {
  ui: { resourceUri: VIEWER_URI },
  "ui/resourceUri": VIEWER_URI,
};

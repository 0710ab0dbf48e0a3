/**
 * The media viewer (an MCP Apps view, see docs/viewer.md): its resource URI,
 * and the `_meta` that links a tool to it. Hosts that render MCP Apps show the view beside the
 * tool's result; others ignore the link and show the result as it is.
 */
export const VIEWER_URI = "ui://generation/viewer";

/**
 * `ui.resourceUri`, as the Apps specification (2026-01-26) and ext-apps 2.x hosts read it. The flat
 * `ui/resourceUri` of the drafts, which the SDK's registerAppTool still adds, is left out: it cost
 * 42 bytes per tool in a tools/list held to 20,000 (the README's Tools section).
 */
export const VIEWER_LINK: Record<string, unknown> = { ui: { resourceUri: VIEWER_URI } };

/**
 * The media viewer (an MCP Apps view, see the README's "Media viewer" section): its resource URI,
 * and the `_meta` that links a tool to it. Hosts that render MCP Apps show the view beside the
 * tool's result; others ignore the link and show the result as it is.
 */
export const VIEWER_URI = "ui://generation/viewer";

/** `ui.resourceUri`, plus the flat key older hosts read (as the ext-apps SDK's registerAppTool adds). */
export const VIEWER_LINK: Record<string, unknown> = {
  ui: { resourceUri: VIEWER_URI },
  "ui/resourceUri": VIEWER_URI,
};

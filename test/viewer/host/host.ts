/**
 * A host page for the viewer, built on the ext-apps SDK's own host side (AppBridge) in the
 * reference basic-host pattern: the view runs in an inner frame of a sandbox proxy frame on
 * another origin, whose CSP the server's `_meta.ui.csp` sets. Requests the view makes to the
 * server (tools/call, resources/read) go to `window.mcpRequest`, which the test wires to a real
 * MCP client of the built server.
 */
import {
  AppBridge,
  type McpUiHostCapabilities,
  type McpUiHostContext,
  type McpUiResourceCsp,
  PostMessageTransport,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import type { HostLog } from "./host-log.js";

declare global {
  interface Window {
    mcpRequest(method: string, params: unknown): Promise<unknown>;
    showView(o: ShowOptions): Promise<void>;
    setTheme(theme: "light" | "dark"): void;
    hostLog: HostLog;
  }
}

interface ShowOptions {
  html: string;
  csp: McpUiResourceCsp | undefined;
  input: Record<string, unknown>;
  result: Record<string, unknown>;
  sandboxUrl: string;
  theme: "light" | "dark";
  /** Sends tool-cancelled with this reason instead of the result. */
  cancelled?: string;
  /** Media only from the declared origins, no blob: or data: (the MCP Inspector's rule). */
  exactOrigins?: boolean;
  /** The host's capabilities, in place of the default (tools, resources, downloads, links, context). */
  capabilities?: McpUiHostCapabilities;
}

let bridge: AppBridge | undefined;
window.hostLog = { downloads: [], resultSentAt: 0, sizes: [], context: [], messages: [], opened: [] };

function waitForProxy(frame: HTMLIFrameElement): Promise<void> {
  return new Promise((resolve) => {
    const listener = (e: MessageEvent) => {
      if (e.source === frame.contentWindow && e.data?.method === "ui/notifications/sandbox-proxy-ready") {
        window.removeEventListener("message", listener);
        resolve();
      }
    };
    window.addEventListener("message", listener);
  });
}

window.showView = async (o) => {
  document.getElementById("view")?.remove();
  const frame = document.createElement("iframe");
  frame.id = "view";
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  frame.style.cssText = "width: 900px; height: 700px; border: 1px solid #999";
  const url = new URL(o.sandboxUrl);
  if (o.csp) url.searchParams.set("csp", JSON.stringify(o.csp));
  if (o.exactOrigins) url.searchParams.set("exact", "1");
  const ready = waitForProxy(frame);
  frame.src = url.href;
  document.body.append(frame);
  await ready;
  const context: McpUiHostContext = { theme: o.theme, displayMode: "inline", platform: "web" };
  bridge = new AppBridge(
    null,
    { name: "viewer-test-host", version: "1.0.0" },
    o.capabilities ?? {
      serverTools: {},
      serverResources: {},
      downloadFile: {},
      openLinks: {},
      updateModelContext: { text: {}, structuredContent: {} },
    },
    { hostContext: context },
  );
  // Only what the host declared is answered, as a host that implements no more would.
  const caps = o.capabilities ?? { downloadFile: {}, openLinks: {}, updateModelContext: {} };
  if (caps.updateModelContext) {
    bridge.onupdatemodelcontext = async (params) => {
      window.hostLog.context.push(params);
      return {};
    };
  }
  if (caps.message) {
    bridge.onmessage = async (params) => {
      window.hostLog.messages.push(params);
      return {};
    };
  }
  if (caps.openLinks) {
    bridge.onopenlink = async ({ url }) => {
      window.hostLog.opened.push(url);
      return {};
    };
  }
  bridge.oncalltool = async (params) => (await window.mcpRequest("tools/call", params)) as never;
  bridge.onreadresource = async (params) => (await window.mcpRequest("resources/read", params)) as never;
  // The MCP Inspector's rule (2.12, its web client's download handler): an embedded resource is
  // saved as a file named by its URI's last segment; a resource_link is opened only when it is an
  // http(s) URL, and anything else is skipped. Recorded here as what the person would receive.
  if (caps.downloadFile)
    bridge.ondownloadfile = async (params) => {
      let skipped = 0;
      for (const item of params.contents) {
        if (item.type === "resource_link") {
          const ok = /^https?:$/.test(new URL(item.uri, "x:/").protocol);
          if (ok) window.hostLog.downloads.push({ opened: item.uri });
          else skipped++;
        } else if ("blob" in item.resource) {
          const name = item.resource.uri.split(/[\\/]/).pop() || "download";
          window.hostLog.downloads.push({
            file: name,
            bytes: atob(item.resource.blob).length,
            mimeType: item.resource.mimeType,
          });
        } else skipped++;
      }
      return skipped > 0 ? { isError: true } : {};
    };
  bridge.onsizechange = (size) => {
    window.hostLog.sizes.push(size);
  };
  const initialized = new Promise<void>((resolve) => {
    if (bridge) bridge.oninitialized = () => resolve();
  });
  const win = frame.contentWindow as Window;
  await bridge.connect(new PostMessageTransport(win, win));
  await bridge.sendSandboxResourceReady({ html: o.html, ...(o.csp ? { csp: o.csp } : {}) });
  await initialized;
  await bridge.sendToolInput({ arguments: o.input });
  window.hostLog.resultSentAt = performance.timeOrigin + performance.now();
  if (o.cancelled !== undefined) await bridge.sendToolCancelled({ reason: o.cancelled });
  else await bridge.sendToolResult(o.result as never);
};

window.setTheme = (theme) => {
  bridge?.setHostContext({ theme, displayMode: "inline", platform: "web" });
};

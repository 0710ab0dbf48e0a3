/**
 * A real browser hosting the viewer: Debian's Chromium driven by playwright-core, a host page
 * built on the ext-apps SDK's AppBridge (test/viewer/host), and a real MCP client of the built
 * server behind it (test/viewer/stack.ts). Used by the browser tests and bench/viewer.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import type { McpUiHostCapabilities, McpUiResourceCsp } from "@modelcontextprotocol/ext-apps/app-bridge";
import { build } from "esbuild";
import type { BrowserContext, Frame, Page } from "playwright-core";
import { launchChromiumContext } from "../helpers/chromium.js";
import type { HostLog } from "./host/host-log.js";

const VIEWER = "ui://generation/viewer";

/** What test/viewer/host/host.ts puts on the host page's window (typed here without the DOM). */
export interface HostWindow {
  showView(o: unknown): Promise<void>;
  setTheme(theme: "light" | "dark"): void;
  hostLog: HostLog;
}

/**
 * The CSP a host derives from `_meta.ui.csp`, directive for directive as the reference host does;
 * with `exact`, media come from the declared origins only (no 'self', blob: or data:), as the MCP
 * Inspector 2.12 builds it.
 */
export function cspHeader(csp: McpUiResourceCsp | undefined, exact = false): string {
  const clean = (d?: string[]) => (d ?? []).filter((x) => !/[;\r\n'" ]/.test(x)).join(" ");
  const media = clean(csp?.resourceDomains);
  if (exact) {
    const from = media || "'none'";
    return [
      "default-src 'none'",
      `script-src 'unsafe-inline' ${media}`.trim(),
      `style-src 'unsafe-inline' ${media}`.trim(),
      `img-src ${from}`,
      `font-src ${from}`,
      `media-src ${from}`,
      `connect-src ${clean(csp?.connectDomains) || "'none'"}`,
      "frame-src 'none'",
      "object-src 'none'",
    ].join("; ");
  }
  const connect = clean(csp?.connectDomains);
  return [
    "default-src 'self' 'unsafe-inline'",
    `script-src 'self' 'unsafe-inline' 'unsafe-eval' blob: data: ${media}`.trim(),
    `style-src 'self' 'unsafe-inline' blob: data: ${media}`.trim(),
    `img-src 'self' data: blob: ${media}`.trim(),
    `font-src 'self' data: blob: ${media}`.trim(),
    `media-src 'self' data: blob: ${media}`.trim(),
    `connect-src 'self' ${connect}`.trim(),
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
  ].join("; ");
}

async function bundle(file: string): Promise<string> {
  const r = await build({
    entryPoints: [join(import.meta.dirname, "host", file)],
    bundle: true,
    format: "iife",
    platform: "browser",
    write: false,
    logLevel: "warning",
  });
  return r.outputFiles[0]?.text ?? "";
}

/** Host page on 127.0.0.1, sandbox proxy on localhost: two origins, as the Apps spec requires. */
async function serveHost(): Promise<{ server: Server; hostUrl: string; sandboxUrl: string }> {
  const [hostJs, sandboxJs] = await Promise.all([bundle("host.ts"), bundle("sandbox.ts")]);
  const page = (js: string) =>
    `<!doctype html><html><body style="margin:0"><script>${js}</script></body></html>`;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/host.html") {
      res.writeHead(200, { "content-type": "text/html" }).end(page(hostJs));
    } else if (url.pathname === "/sandbox.html") {
      const csp = url.searchParams.get("csp");
      res
        .writeHead(200, {
          "content-type": "text/html",
          "content-security-policy": cspHeader(
            csp ? (JSON.parse(csp) as McpUiResourceCsp) : undefined,
            url.searchParams.get("exact") === "1",
          ),
        })
        .end(page(sandboxJs));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    hostUrl: `http://127.0.0.1:${port}/host.html`,
    sandboxUrl: `http://localhost:${port}/sandbox.html`,
  };
}

export interface ShowOptions {
  /** Replaces the CSP the server declared, as a host that allows no media origins would. */
  csp?: McpUiResourceCsp;
  /** Media from the declared origins only, no blob: or data: (the MCP Inspector's rule). */
  exactOrigins?: boolean;
  /** Refuses the view's resources/read, as a host whose result size limit a whole output exceeds. */
  refuseResourceRead?: boolean;
  theme?: "light" | "dark";
  /** Ends the call with tool-cancelled (this reason) instead of sending its result. */
  cancelled?: string;
  /** The host's capabilities, in place of the test host's default. */
  capabilities?: McpUiHostCapabilities;
  /** Changes the arguments of the view's tool calls on their way, as a faulty host might. */
  tamper?: (name: string, args: Record<string, unknown>) => Record<string, unknown>;
}

export interface Browser {
  page: Page;
  /** Requests the view made of the server, in order. */
  requests: Array<{ method: string; params: { name?: string; uri?: string } }>;
  /** Calls a tool as the model would, then shows its result in a fresh view; returns the view's frame. */
  show(
    name: string,
    args: Record<string, unknown>,
    o?: ShowOptions,
  ): Promise<{ frame: Frame; result: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function openBrowser(client: Client): Promise<Browser> {
  const [host, probes] = await Promise.all([serveHost(), bundle("probes.ts")]);
  const profile = mkdtempSync(join(tmpdir(), "viewer-chromium-"));
  const context: BrowserContext = await launchChromiumContext(profile, {
    viewport: { width: 1000, height: 800 },
    deviceScaleFactor: 1,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const requests: Browser["requests"] = [];
  let refuseRead = false;
  let tamper: ShowOptions["tamper"];
  await page.exposeFunction("mcpRequest", async (method: string, params: Record<string, unknown>) => {
    requests.push({ method, params });
    if (refuseRead && method === "resources/read") throw new Error("result larger than this host allows");
    if (method === "tools/call") {
      const name = String(params.name);
      const args = (params.arguments ?? {}) as Record<string, unknown>;
      return client.callTool({ name, arguments: tamper ? tamper(name, args) : args });
    }
    if (method === "resources/read") return client.readResource(params as never);
    throw new Error(`the test host forwards no ${method}`);
  });
  await page.goto(host.hostUrl);
  const read = await client.readResource({ uri: VIEWER });
  const content = read.contents[0] as { text: string; _meta?: { ui?: { csp?: McpUiResourceCsp } } };

  return {
    page,
    requests,
    async show(name, args, o = {}) {
      const result = (await client.callTool({ name, arguments: args })) as Record<string, unknown>;
      requests.length = 0;
      refuseRead = o.refuseResourceRead === true;
      tamper = o.tamper;
      await page.evaluate((opts) => (globalThis as unknown as HostWindow).showView(opts), {
        html: content.text,
        csp: o.csp ?? content._meta?.ui?.csp,
        input: args,
        result,
        sandboxUrl: host.sandboxUrl,
        theme: o.theme ?? "light",
        ...(o.cancelled === undefined ? {} : { cancelled: o.cancelled }),
        ...(o.exactOrigins ? { exactOrigins: true } : {}),
        ...(o.capabilities ? { capabilities: o.capabilities } : {}),
      });
      const frame = page.frames().find((f) => f.parentFrame()?.url().includes("/sandbox.html"));
      if (!frame) throw new Error("the view's frame did not appear");
      // Evaluated over the DevTools protocol, so the frame's CSP does not apply to the probes.
      await frame.evaluate(probes);
      return { frame, result };
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
      await new Promise((r) => host.server.close(r));
    },
  };
}

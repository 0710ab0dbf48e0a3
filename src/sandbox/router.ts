/**
 * The fetch-style core: routes every endpoint of docs/service.md#endpoints plus the signed file route,
 * authenticates, checks scopes, applies injected faults, and turns refusals into the envelope.
 */

import { chatCompletion } from "./chat-endpoint.js";
import { extractVideo } from "./extract.js";
import { echoedKey, type Fault, parseInjection } from "./faults.js";
import { requireScope, type Scope } from "./keys.js";
import { publicCatalog } from "./model-catalog.js";
import {
  ConnectionReset,
  errorResponse,
  invalid,
  json,
  notFound,
  Refusal,
  refusalResponse,
} from "./sandbox-errors.js";
import type { RequestCtx, SandboxState } from "./state.js";
import { createKeys, listAllTasks } from "./steering.js";
import { submitMedia } from "./submit.js";

type Handler = (ctx: RequestCtx) => Promise<Response>;
interface Route {
  method: string;
  path: string;
  scope: Scope;
  handler: Handler;
}

const ROUTES: Route[] = [
  {
    method: "GET",
    path: "/api/generate/models",
    scope: "read",
    handler: async () => json(200, publicCatalog()),
  },
  {
    method: "POST",
    path: "/api/generate/image",
    scope: "generate",
    handler: (c) => submitMedia(c, "image"),
  },
  {
    method: "POST",
    path: "/api/generate/video",
    scope: "generate",
    handler: (c) => submitMedia(c, "video"),
  },
  {
    method: "POST",
    path: "/api/generate/audio",
    scope: "generate",
    handler: (c) => submitMedia(c, "audio"),
  },
  { method: "GET", path: "/api/generate/tasks/{id}", scope: "read", handler: readTask },
  { method: "HEAD", path: "/api/generate/tasks/{id}", scope: "read", handler: readTask },
  { method: "POST", path: "/api/generate/assets", scope: "generate", handler: uploadAsset },
  { method: "GET", path: "/api/generate/voices", scope: "read", handler: listVoices },
  { method: "POST", path: "/api/generate/voices", scope: "generate", handler: uploadVoice },
  {
    method: "POST",
    path: "/api/generate/text/v1/chat/completions",
    scope: "generate",
    handler: chatCompletion,
  },
  {
    method: "POST",
    path: "/api/generate/extract/video",
    scope: "generate",
    handler: extractVideo,
  },
  // Not part of the service: how tests steer a sandbox running in another process.
  { method: "POST", path: "/sandbox/faults", scope: "read", handler: injectFault },
  { method: "DELETE", path: "/sandbox/faults", scope: "read", handler: clearFaults },
  { method: "POST", path: "/sandbox/keys", scope: "read", handler: createKeys },
  { method: "GET", path: "/sandbox/tasks", scope: "read", handler: listAllTasks },
];

async function injectFault(ctx: RequestCtx): Promise<Response> {
  const injection = parseInjection(await ctx.req.json().catch(() => undefined));
  if (!injection) throw invalid('Send {"route": "METHOD /path", "fault": {...}, "times"?: n}.');
  ctx.s.faults.inject(injection.route, injection.fault, injection.times);
  return json(201, { injected: injection });
}

async function clearFaults(ctx: RequestCtx): Promise<Response> {
  ctx.s.faults.clear();
  return new Response(null, { status: 204 });
}

function match(method: string, pathname: string): Route | undefined {
  const path = /^\/api\/generate\/tasks\/[^/]+$/.test(pathname) ? "/api/generate/tasks/{id}" : pathname;
  return ROUTES.find((r) => r.method === method && r.path === path);
}

async function readTask(ctx: RequestCtx): Promise<Response> {
  const id = decodeURIComponent(ctx.url.pathname.split("/").pop() ?? "");
  const task = ctx.s.tasks.owned(ctx.key.id, id);
  if (!task) throw notFound(`Task ${id} was not found.`);
  if (ctx.req.method === "HEAD") return new Response(null, { status: 200 });
  return json(200, { task: ctx.s.tasks.view(task, ctx.origin, ctx.s.clock.now()) });
}

async function uploadAsset(ctx: RequestCtx): Promise<Response> {
  const now = ctx.s.clock.now();
  const asset = await ctx.s.assets.upload(ctx.req, ctx.key.id, now);
  ctx.s.stats.dispatch(ctx.route);
  return json(201, { asset: ctx.s.assets.view(asset, ctx.origin, now) });
}

async function listVoices(ctx: RequestCtx): Promise<Response> {
  return json(200, ctx.s.voices.list(ctx.key.id, ctx.url));
}

async function uploadVoice(ctx: RequestCtx): Promise<Response> {
  const voice = await ctx.s.voices.upload(ctx.req, ctx.key.id, ctx.s.clock.now());
  ctx.s.stats.dispatch(ctx.route);
  return json(201, { voice: ctx.s.voices.view(voice) });
}

function faultResponse(f: Extract<Fault, { status: number }>, req: Request): Response {
  const headers: Record<string, string> =
    f.retryAfter !== undefined ? { "retry-after": String(f.retryAfter) } : {};
  let message = f.message ?? `Injected fault: HTTP ${f.status}.`;
  if (f.echoKey) message += echoedKey(req.headers.get("authorization"));
  return errorResponse(f.status, message, f.code, headers);
}

function hang(signals: AbortSignal[]): Promise<never> {
  return new Promise((_, reject) => {
    const any = AbortSignal.any(signals);
    if (any.aborted) reject(any.reason);
    any.addEventListener("abort", () => reject(any.reason), { once: true });
  });
}

/** A body that delivers its first half and then breaks, as a dropped connection would. */
function cutBody(response: Response): Response {
  const source = response.body;
  if (!source) return response;
  let sent = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent) {
        controller.error(new TypeError("terminated: sandbox cut the body"));
        return;
      }
      const all = new Uint8Array(await new Response(source).arrayBuffer());
      controller.enqueue(all.subarray(0, Math.floor(all.length / 2)));
      sent = true;
    },
  });
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(body, { status: response.status, headers });
}

const FILES_ROUTE = "/sandbox/files/{id}";

export async function route(s: SandboxState, req: Request): Promise<Response> {
  const url = new URL(req.url);
  const isFile = s.assets.isFileRoute(url.pathname) && (req.method === "GET" || req.method === "HEAD");
  const found = isFile ? undefined : match(req.method, url.pathname);
  const routeName = isFile
    ? `${req.method} ${FILES_ROUTE}`
    : found
      ? `${found.method} ${found.path}`
      : `${req.method} ${url.pathname}`;
  s.stats.request(routeName);
  let fault: Fault | undefined;
  const answer = async (): Promise<Response> => {
    try {
      // Signed file URLs carry their own permission: no bearer key.
      if (isFile) {
        fault = s.faults.take(routeName);
        if (fault && "status" in fault && !fault.commit) return faultResponse(fault, req);
        return s.assets.serve(req, url, s.clock.now());
      }
      if (!found) throw notFound(`No route for ${req.method} ${url.pathname}.`);
      const key = s.keys.authenticate(req.headers.get("authorization"));
      requireScope(key, found.scope);
      fault = s.faults.take(routeName);
      if (fault && "status" in fault && !fault.commit) return faultResponse(fault, req);
      if (fault && "kind" in fault && fault.kind === "hang" && fault.commit === false) {
        return await hang([req.signal, s.closing]);
      }
      const origin = s.publicBaseUrl ?? url.origin;
      return await found.handler({ s, req, url, key, route: routeName, origin, fault });
    } catch (e) {
      if (e instanceof Refusal) return refusalResponse(e, req.method);
      throw e;
    }
  };
  const response = await answer();
  // Faults that act after the work apply whatever the answer was: the caller never learns it.
  if (!fault || ("status" in fault && !fault.commit)) return response;
  if ("status" in fault) {
    await response.body?.cancel();
    return faultResponse(fault, req);
  }
  switch (fault.kind) {
    case "reset-after-commit":
      await response.body?.cancel();
      throw new ConnectionReset();
    case "hang":
      await response.body?.cancel();
      return hang([req.signal, s.closing]);
    case "cut-stream":
      return response.headers.get("content-type")?.startsWith("text/event-stream")
        ? response
        : cutBody(response);
    default:
      return response;
  }
}

/**
 * What every tool handler gets: the Engine (one API key's client and ledger) and a
 * ToolContext (one call's cancellation, progress and questions to the user), so tools
 * stay thin and never touch the SDK's request context directly.
 */
import { getUiCapability, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type McpServer,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { ServiceClient } from "../client/service-client.js";
import type { EngineConfig } from "../config/config-types.js";
import type { Ledger } from "../ledger/open-ledger.js";
import { type AskedState, askedState } from "./answers.js";
import type { DeliveryHook } from "./delivery.js";
import { declaresTasks } from "./mcp-task-wire.js";

/** One API key's view of the service; built per HTTP session, or once for stdio. */
export type { EngineConfig };

/**
 * Where an engine's key came from, which decides what a user does when the service refuses it
 * (src/mcp/next-steps.ts): the environment (GENERATION_API_KEY), an HTTP request's own
 * `Authorization` header, or an OAuth sign-in (the key the user typed on the sign-in page).
 */
export type KeyOrigin = "environment" | "header" | "sign-in";

/** What tools know of the key in force: never the key itself. */
export interface KeyStanding {
  readonly origin: KeyOrigin;
  /** The service refused the key (401 INVALID_API_KEY) since this engine was made. */
  readonly refused: boolean;
}

export interface Engine {
  config: EngineConfig;
  client: ServiceClient;
  ledger: Ledger;
  /** Hash of the API key in force: every ledger record is bound to it. */
  keyHash: string;
  key: KeyStanding;
  /**
   * The base key that seals the questions' requestState (src/mcp/answers.ts), the same on every
   * replica when derived from GENERATION_AUTH_SECRET; a random key of this process when absent.
   */
  answerKey?: Uint8Array | undefined;
  /**
   * The MAC key of spending approvals (src/calls/paid/approval.ts), derived from
   * GENERATION_AUTH_SECRET when it is set; absent, approvals use a secret kept in the ledger's store.
   */
  approvalKey?: Uint8Array | undefined;
}

/** A question pushed to the user now, and its answer; "unanswered" when none came in time. */
export type AskNow = (
  params: { message: string; requestedSchema: Record<string, unknown> },
  ms: number,
) => Promise<{ action: string; content?: Record<string, unknown> | undefined } | "unanswered">;

export interface ToolContext {
  readonly signal: AbortSignal;
  /** The client can answer an elicitation (a question to its user). */
  readonly canElicit: boolean;
  /**
   * On a 2025-11-25 connection whose client declared elicitation: asks the user now (a push
   * request) and waits at most the given time, so a host that never draws the form (Claude
   * Desktop, anthropics/claude-code#88901) does not hold the call until it dies. Absent on
   * 2026-07-28, where a question is an input_required round the host answers or not.
   */
  readonly askNow?: AskNow;
  /** The client offers MCP roots, which narrow the allowed directories. */
  readonly offersRoots: boolean;
  /** The client renders MCP Apps views (the media viewer), so a result can open one for the user. */
  readonly rendersApps: boolean;
  /** Answers the client returned to an earlier input-required result of this call. */
  readonly inputResponses: Record<string, unknown> | undefined;
  /**
   * What those answers were asked about: the requestState of the earlier result, verified by its
   * MAC (src/mcp/answers.ts); undefined when none came back or it did not verify.
   */
  readonly answered: AskedState | undefined;
  /**
   * This request declared the MCP Tasks extension (2026-07-28, src/mcp/mcp-task-wire.ts): a paid call
   * may answer with a task once its request is claimed, and go on in the background.
   */
  readonly takesTasks?: boolean;
  /** The task was asked for in the 2025-11-25 form (`params.task`, src/mcp/mcp-task-wire-2025.ts). */
  readonly taskForm?: "2025-11-25";
  /**
   * On a 2025-11-25 connection that asked for a task: tells the client a task's new status
   * (`notifications/tasks/status`, the task's fields as `tasks/get` gives them), outside any
   * request, for as long as the connection lives. Best effort: a closed connection drops it.
   */
  notifyTaskStatus?(task: Record<string, unknown>): void;
  /** Told when a wait schedules its next read of the service's task (epoch ms): a task's pollers follow it. */
  scheduled?(readAt: number): void;
  /**
   * Sends a progress notification when the caller asked for progress (a progressToken);
   * values are kept strictly increasing whatever the caller passes.
   */
  progress(message: string, value?: number, total?: number): Promise<void>;
  /**
   * Settles `hook` once the transport knows whether this call's result reached a client still
   * connected: `true` once written to it (docs/idempotency.md#delivery), `false` when the write
   * failed, the client left or the call was cancelled. Exactly once either way.
   */
  onDelivery(hook: DeliveryHook): void;
}

/** The part of a ToolContext only the registering wrapper sees: the hooks its transport settles. */
export interface DeliveryHooks {
  readonly pending: DeliveryHook[];
  /** The call's signal when it is not the request's own (the transport may hurry calls along). */
  readonly signal?: AbortSignal;
  /** The request asked for a task in the 2025-11-25 form (`params.task` on that revision). */
  readonly asks2025Task?: boolean;
}

/** The capabilities of the client making this request. */
export function clientCapabilities(server: McpServer, ctx: ServerContext): ClientCapabilities | undefined {
  // The 2026-07-28 revision carries capabilities on each request; 2025-11-25 on initialize.
  return (
    ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
      | ClientCapabilities
      | undefined) ?? server.server.getClientCapabilities()
  );
}

/** True when the client declared it renders MCP Apps views (the `io.modelcontextprotocol/ui` extension). */
export function rendersApps(caps: ClientCapabilities | undefined): boolean {
  return getUiCapability(caps)?.mimeTypes?.includes(RESOURCE_MIME_TYPE) === true;
}

/** The connection speaks 2026-07-28 (or later), where the server sends no requests of its own. */
function servedModern(server: McpServer): boolean {
  const version = server.server.getNegotiatedProtocolVersion();
  return version !== undefined && version >= "2026";
}

/**
 * An elicitation pushed on this request (2025-11-25), bounded by `ms`: no answer in time, or a
 * failure to ask, is "unanswered" (the SDK cancels the request; a late answer is dropped). A
 * cancelled call stays cancelled.
 */
const askNow =
  (ctx: ServerContext, signal: AbortSignal): AskNow =>
  async (params, ms) => {
    try {
      const r = await ctx.mcpReq.send(
        { method: "elicitation/create", params: { mode: "form", ...params } },
        { timeout: ms, signal },
      );
      return r as { action: string; content?: Record<string, unknown> };
    } catch (err) {
      if (signal.aborted) throw err;
      return "unanswered";
    }
  };

/** Builds a ToolContext over one SDK request context. */
export function toolContext(
  server: McpServer,
  ctx: ServerContext,
  hooks: DeliveryHooks = { pending: [] },
  /** Applied to progress messages, which may quote the service (and so the key). */
  scrub: (text: string) => string = (text) => text,
): ToolContext {
  const caps = clientCapabilities(server, ctx);
  const token = ctx.mcpReq._meta?.progressToken;
  const signal = hooks.signal ?? ctx.mcpReq.signal;
  const pushes = caps?.elicitation !== undefined && !servedModern(server);
  let last = 0;
  return {
    signal,
    canElicit: caps?.elicitation !== undefined,
    ...(pushes ? { askNow: askNow(ctx, signal) } : {}),
    offersRoots: caps?.roots !== undefined,
    rendersApps: rendersApps(caps),
    inputResponses: ctx.mcpReq.inputResponses,
    answered: askedState(ctx.mcpReq.requestState()),
    takesTasks: hooks.asks2025Task === true || declaresTasks(server, ctx),
    ...(hooks.asks2025Task === true
      ? {
          taskForm: "2025-11-25" as const,
          notifyTaskStatus: (task: Record<string, unknown>) => {
            server.server
              .notification({ method: "notifications/tasks/status", params: task } as never)
              .catch(() => {});
          },
        }
      : {}),
    onDelivery(hook) {
      hooks.pending.push(hook);
    },
    async progress(message, value, total) {
      if (token === undefined || ctx.mcpReq.signal.aborted) return;
      last = value !== undefined && value > last ? value : last + 1;
      const params: Record<string, unknown> = {
        progressToken: token,
        progress: last,
        message: scrub(message),
      };
      if (total !== undefined && total >= last) params.total = total;
      try {
        await ctx.mcpReq.notify({ method: "notifications/progress", params });
      } catch {
        // Progress is advisory: a closed stream must not fail the call.
      }
    },
  };
}

/**
 * Not part of the service: how a test or benchmark steers and inspects a sandbox running in its own
 * process (`generation-mcp sandbox`), as `POST /sandbox/faults` does for faults. Both routes cross
 * keys, so only the public sandbox key may call them:
 *
 * - `POST /sandbox/keys` `{"count": n, "scopes"?: [...], "capGems"?: n, "balanceGems"?: n}` makes
 *   n keys (at most 10,000 a request) and answers `{"keys": [...]}`: users of their own for a
 *   many-user test, as `Sandbox.addKey` makes them in-process.
 * - `GET /sandbox/tasks` answers `{"tasks": [{id, owner, prompt, createdAt}]}`, every task created,
 *   so a test counts the tasks each call's prompt created (a double dispatch is two).
 */
import { z } from "zod";
import { invalid, json, Refusal } from "./sandbox-errors.js";
import { SANDBOX_API_KEY } from "./sandbox-key.js";
import type { RequestCtx } from "./state.js";

const MAX_KEYS = 10_000;

const KeysRequest = z.strictObject({
  count: z.int().min(1).max(MAX_KEYS),
  scopes: z.array(z.enum(["read", "generate"])).optional(),
  capGems: z.int().min(0).optional(),
  balanceGems: z.int().min(0).optional(),
});

function requirePublicKey(ctx: RequestCtx): void {
  if (ctx.req.headers.get("authorization") !== `Bearer ${SANDBOX_API_KEY}`) {
    throw new Refusal(403, "INSUFFICIENT_SCOPE", "Only the public sandbox key steers the sandbox.");
  }
}

export async function createKeys(ctx: RequestCtx): Promise<Response> {
  requirePublicKey(ctx);
  const parsed = KeysRequest.safeParse(await ctx.req.json().catch(() => undefined));
  if (!parsed.success) {
    throw invalid(`Send {"count": 1-${MAX_KEYS}, "scopes"?: [...], "capGems"?: n, "balanceGems"?: n}.`);
  }
  const { count, scopes, capGems, balanceGems } = parsed.data;
  const keys = Array.from({ length: count }, () =>
    ctx.s.keys.add({
      ...(scopes === undefined ? {} : { scopes }),
      ...(capGems === undefined ? {} : { capGems }),
      ...(balanceGems === undefined ? {} : { balanceGems }),
    }),
  );
  return json(201, { keys });
}

export async function listAllTasks(ctx: RequestCtx): Promise<Response> {
  requirePublicKey(ctx);
  const tasks = [...ctx.s.tasks.all()].map((t) => ({
    id: t.id,
    owner: t.ownerId,
    prompt: t.prompt,
    createdAt: new Date(t.createdAt).toISOString(),
  }));
  return json(200, { tasks });
}

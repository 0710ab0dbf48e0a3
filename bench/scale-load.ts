/**
 * One user's part of bench/scale.ts's mixed load, on the sessionless 2026-07-28 wire through the
 * front (any replica may serve any call), every request carrying the user's own address as
 * X-Forwarded-For: list_models; a paid generate_image (wait 0) under an identity of the bench's
 * own (`idempotencyKey`), sent again under the same identity when the call fails, as a client
 * retries; poll_task on the task it got; for one user in `uploadEvery`, upload_asset of a small
 * PNG; list_models again; then poll_task with a wait until the task ends. Every call is timed and
 * kept, failed or not, so the report can tell failures during the outage from the rest.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { renderImage } from "../src/sandbox/media/png.js";

export interface Call {
  tool: string;
  start: number;
  end: number;
  error?: string;
}

export interface UserOutcome {
  /** The identity of the paid call, and the task it claimed (undefined when no attempt got one). */
  identity: string;
  taskId: string | undefined;
  /** The task's status at the end (after polling with a wait), or why it was not found. */
  final: string;
}

const PNG = renderImage("scale", "1:1").toString("base64");
const RETRIES = 3;

export async function userLoad(o: {
  url: string;
  token: string;
  from: string;
  identity: string;
  upload: boolean;
  calls: Call[];
  clock: () => number;
}): Promise<UserOutcome> {
  const c = new Client(
    { name: "scale", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  // Connecting (server/discover) is a call like the others: timed, kept, tried again when it fails.
  const transport = () =>
    new StreamableHTTPClientTransport(new URL(o.url), {
      requestInit: { headers: { authorization: `Bearer ${o.token}`, "x-forwarded-for": o.from } },
    });
  for (let attempt = 0; ; attempt++) {
    const start = o.clock();
    try {
      await c.connect(transport());
      o.calls.push({ tool: "connect", start, end: o.clock() });
      break;
    } catch (error) {
      o.calls.push({ tool: "connect", start, end: o.clock(), error: errorText(error) });
      if (attempt + 1 >= RETRIES)
        return { identity: o.identity, taskId: undefined, final: "never connected" };
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  const call = async (tool: string, args: Record<string, unknown>) => {
    const start = o.clock();
    try {
      const r = await c.callTool({ name: tool, arguments: args });
      if (r.isError) throw new Error(JSON.stringify(r.content).slice(0, 200));
      o.calls.push({ tool, start, end: o.clock() });
      return r.structuredContent as Record<string, unknown>;
    } catch (error) {
      o.calls.push({ tool, start, end: o.clock(), error: errorText(error) });
      return undefined;
    }
  };
  try {
    await call("list_models", {});
    let taskId: string | undefined;
    for (let attempt = 0; attempt < RETRIES && taskId === undefined; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 1_000));
      const paid = await call("generate_image", {
        model: "sandbox-image-fast",
        prompt: o.identity,
        idempotencyKey: o.identity,
        wait: 0,
      });
      taskId = (paid?.task as { id?: string } | undefined)?.id;
    }
    if (taskId !== undefined) await call("poll_task", { taskId });
    if (o.upload) await call("upload_asset", { data: PNG, mimeType: "image/png", filename: "scale.png" });
    await call("list_models", {});
    if (taskId === undefined) return { identity: o.identity, taskId, final: "no task claimed" };
    // Found at the end: read with a wait until it ends, read again when a read fails (a client would).
    let task: { status?: string } | undefined;
    for (let attempt = 0; attempt < RETRIES && task?.status !== "succeeded"; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 1_000));
      task = (await call("poll_task", { taskId, wait: 30 }))?.task as { status?: string } | undefined;
    }
    return {
      identity: o.identity,
      taskId,
      final: task?.status ?? `not found: ${o.calls.at(-1)?.error?.slice(0, 100)}`,
    };
  } finally {
    await c.close().catch(() => undefined);
  }
}

/** The error and its causes, the innermost last ("fetch failed: other side closed"). */
function errorText(error: unknown): string {
  const parts: string[] = [];
  for (let e = error; e instanceof Error && parts.length < 4; e = e.cause)
    parts.push(e.message.slice(0, 120));
  return parts.join(": ");
}

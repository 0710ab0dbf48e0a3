/**
 * The deployment docs/deploying.md documents: three replicas of the built CLI (`--transport http`) on one
 * PostgreSQL ledger behind HAProxy, against the sandbox over loopback HTTP (through a recording
 * proxy that keeps every submission's identity and exact body). Identical calls landing on
 * different replicas at once are one logical request: one identity, one dispatch. A replica killed
 * after its claim, or after its send, leaves a record the next replica resumes under the same
 * identity with the same bytes.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runnableOrSkipped } from "../helpers/chromium.js";
import { startHttpCli } from "../helpers/cli.js";
import { available } from "../ledger/stores.js";
import {
  type Deployment,
  haproxyInstalled,
  type Replicas,
  startDeployment,
  startReplicas,
} from "./balancer.js";

const ROUTE = "POST /api/generate/image";
const ready = runnableOrSkipped(
  haproxyInstalled() ? undefined : "haproxy is not installed (apt-get install haproxy)",
  "the replica tests (test/e2e/replicas.test.ts)",
);

let d: Deployment | undefined;
let key: string;

beforeAll(async () => {
  if (!ready || !(await available("postgres"))) return;
  d = await startDeployment();
  key = d.sandbox.addKey({ scopes: ["read", "generate"] });
}, 60_000);

afterAll(() => d?.stop());

/** A client through the balancer's TLS front (its fetch), or straight to a replica's `url`. */
async function connect(url: string, modern: boolean) {
  const client = new Client(
    { name: "replica-test", version: "1.0.0" },
    modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  const front = d !== undefined && url === d.balancer.url ? d.balancer.fetch : undefined;
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    ...(front === undefined ? {} : { fetch: front }),
  });
  await client.connect(transport);
  return client;
}

async function generate(client: Client, prompt: string): Promise<string> {
  const out = await client.callTool({
    name: "generate_image",
    arguments: { model: "sandbox-image-fast", prompt, wait: 0 },
  });
  expect(out.isError, JSON.stringify(out.content)).toBeFalsy();
  return (out.structuredContent as { idempotencyKey: string }).idempotencyKey;
}

describe.runIf(ready)("three replicas behind HAProxy on one PostgreSQL ledger", () => {
  it("50 identical calls at once, sessionful and sessionless, spread over the replicas: one identity, one dispatch", async (ctx) => {
    if (d === undefined) return ctx.skip();
    const { sandbox, receiver, balancer } = d;
    const url = balancer.url;
    const clients = await Promise.all(Array.from({ length: 50 }, (_, i) => connect(url, i % 2 === 1)));
    const before = sandbox.stats.dispatches(ROUTE);
    // The service answers nothing until every call has had time to reach its replica and claim: an
    // identical call made after the first one's result was delivered is new work (a new identity,
    // docs/idempotency.md#rules, rule 7), so on a slow machine "at once" must be made to hold.
    const release = receiver.hold();
    try {
      const calls = clients.map((c) => generate(c, "one harbour, fifty callers"));
      await receiver.waitForRequests(receiver.requests.length + 1);
      setTimeout(release, 2_000);
      const identities = await Promise.all(calls);
      expect(new Set(identities).size).toBe(1);
      expect(sandbox.stats.dispatches(ROUTE) - before).toBe(1);
      // Every replica took part: each was sent sessions.
      const sessions = await balancer.sessionsPerReplica();
      expect(sessions).toHaveLength(3);
      for (const n of sessions) expect(n).toBeGreaterThan(0);
    } finally {
      release();
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it("50 distinct calls: fifty identities, fifty dispatches, every later call on a session reaches its replica", async (ctx) => {
    if (d === undefined) return ctx.skip();
    const { sandbox, balancer } = d;
    const url = balancer.url;
    const clients = await Promise.all(Array.from({ length: 10 }, (_, i) => connect(url, i % 2 === 1)));
    const before = sandbox.stats.dispatches(ROUTE);
    try {
      // Five calls per session: a sessionful one fails with 404 if the balancer sends it elsewhere.
      const identities = await Promise.all(
        Array.from({ length: 50 }, (_, i) => generate(clients[i % 10] as Client, `meadow number ${i}`)),
      );
      expect(new Set(identities).size).toBe(50);
      expect(sandbox.stats.dispatches(ROUTE) - before).toBe(50);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it("a session no replica knows is answered 404, so the client initializes again", async (ctx) => {
    if (d === undefined) return ctx.skip();
    const res = await d.balancer.fetch(d.balancer.url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": "d0e5a1a2-0000-4000-8000-000000000000",
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(404);
  });

  it.for([
    ["after its claim, before the service saw a byte", false],
    ["after its send reached the service", true],
  ] as const)(
    "a replica SIGKILLed %s: the identical call through the balancer resumes the same identity with the same bytes",
    async ([, commit], ctx) => {
      if (d === undefined) return ctx.skip();
      const { sandbox, receiver, balancer } = d;
      const prompt = `lighthouse, killed ${commit ? "after" : "before"} dispatch`;
      const victim = await startHttpCli([], d.replicaEnv());
      const before = sandbox.stats.dispatches(ROUTE);
      const seen = receiver.requests.length;
      // The service hangs on this submission (having dispatched it or not): the victim is mid-call.
      sandbox.faults.inject(ROUTE, { kind: "hang", commit }, 1);
      const client = await connect(victim.url, false);
      const lost = generate(client, prompt).catch(() => "killed");
      await receiver.waitForRequests(seen + 1);
      victim.child.kill("SIGKILL");
      expect(await lost).toBe("killed");

      const again = await connect(balancer.url, true);
      try {
        const identity = await generate(again, prompt);
        const sent = receiver.requests.slice(seen);
        expect(sent).toHaveLength(2);
        expect(sent.map((r) => r.identity)).toEqual([identity, identity]);
        expect(sent[1]?.body).toBe(sent[0]?.body);
        expect(sandbox.stats.dispatches(ROUTE) - before).toBe(1);
      } finally {
        await again.close();
      }
    },
  );
});

describe.runIf(ready)("spending confirmations across replicas", () => {
  let asking: Replicas | undefined;
  beforeAll(async () => {
    const deployment = d;
    if (deployment === undefined) return;
    // Every submission above 0 Gems asks the user first (elicitation, on the session's stream).
    asking = await startReplicas(() => deployment.replicaEnv({ GENERATION_CONFIRM_ABOVE_GEMS: "0" }));
  }, 60_000);
  afterAll(() => asking?.stop());

  async function confirming(answer: "accept" | "decline", asked: string[]) {
    const client = new Client(
      { name: "replica-test", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler("elicitation/create", async (req) => {
      asked.push(String((req.params as { message?: unknown }).message ?? ""));
      return (
        answer === "accept" ? { action: "accept", content: { confirm: true } } : { action: "decline" }
      ) as never;
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(asking?.balancer.url ?? ""), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
        ...(asking === undefined ? {} : { fetch: asking.balancer.fetch }),
      }),
    );
    return client;
  }

  it("each session's confirmation is asked and answered on the replica that holds the call", async (ctx) => {
    if (d === undefined || asking === undefined) return ctx.skip();
    const { sandbox } = d;
    const front = asking.balancer;
    const asked: string[] = [];
    const clients = await Promise.all(Array.from({ length: 9 }, () => confirming("accept", asked)));
    const before = sandbox.stats.dispatches(ROUTE);
    try {
      const ids = await Promise.all(clients.map((c, i) => generate(c, `confirmed pier ${i}`)));
      expect(new Set(ids).size).toBe(9);
      expect(asked).toHaveLength(9);
      expect(sandbox.stats.dispatches(ROUTE) - before).toBe(9);
      for (const n of await front.sessionsPerReplica()) expect(n).toBeGreaterThan(0);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it("a declined confirmation sends nothing, whichever replica holds the session", async (ctx) => {
    if (d === undefined || asking === undefined) return ctx.skip();
    const { sandbox } = d;
    const asked: string[] = [];
    const clients = await Promise.all(Array.from({ length: 3 }, () => confirming("decline", asked)));
    const before = sandbox.stats.dispatches(ROUTE);
    try {
      const outs = await Promise.all(
        clients.map((c, i) =>
          c.callTool({
            name: "generate_image",
            arguments: { model: "sandbox-image-fast", prompt: `declined pier ${i}`, wait: 0 },
          }),
        ),
      );
      for (const out of outs) expect(out.isError).toBe(true);
      expect(asked).toHaveLength(3);
      expect(sandbox.stats.dispatches(ROUTE) - before).toBe(0);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });
});

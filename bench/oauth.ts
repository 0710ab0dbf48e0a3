/**
 * (e) and (f) of `npm run bench`: what `--auth oauth` costs the server.
 *  (e) the sign-in flow's server time, step by step (registration, authorization request, the
 *      sign-in page, the form post with the service's key check, the resume, the code exchange),
 *      driven over raw HTTP with a cookie jar, as a browser would, so only server time is counted;
 *  (f) token validation per MCP request: the same load of SESSIONS concurrent Streamable HTTP
 *      sessions calling list_models, once with the service key as Bearer (`--auth key`) and once
 *      with access tokens (`--auth oauth`), p50/p99 of each and the difference.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SANDBOX_API_KEY } from "../src/sandbox/sandbox.js";
import { startHttpCli } from "../test/helpers/cli.js";
import { freePort } from "../test/ledger/stores.js";

const SIGN_INS = Number(process.env.BENCH_SIGN_INS ?? 20);
const REDIRECT = "http://127.0.0.1:9/callback";
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;
const print = (line: string) => process.stdout.write(`${line}\n`);

/** A browser's part of the flow: cookies kept, redirects not followed, each request timed. */
class Jar {
  readonly #cookies = new Map<string, string>();
  readonly steps: Record<string, number> = {};

  async go(step: string, url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.#cookies.size > 0)
      headers.set("cookie", [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const started = performance.now();
    const res = await fetch(url, { ...init, headers, redirect: "manual" });
    const body = await res.text();
    this.steps[step] = (this.steps[step] ?? 0) + performance.now() - started;
    for (const c of res.headers.getSetCookie()) {
      const [pair = ""] = c.split(";");
      const at = pair.indexOf("=");
      this.#cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return new Response(body, { status: res.status, headers: res.headers });
  }
}

/** One whole sign-in over raw HTTP; the access token and the time of each step. */
async function signIn(
  issuer: string,
  user: number,
): Promise<{ token: string; steps: Record<string, number> }> {
  const jar = new Jar();
  const reg = await jar.go("register", `${issuer}/oauth/register`, {
    method: "POST",
    // Each user from an address of their own, as the trusted proxy in front says (the rate limit is per address).
    headers: {
      "content-type": "application/json",
      "x-forwarded-for": `10.${(user >> 8) & 255}.${user & 255}.1`,
    },
    body: JSON.stringify({
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
      client_name: "bench",
    }),
  });
  const { client_id } = (await reg.json()) as { client_id: string };
  const query = new URLSearchParams({
    response_type: "code",
    client_id,
    redirect_uri: REDIRECT,
    scope: "mcp",
    resource: `${issuer}/mcp`,
    code_challenge: CHALLENGE,
    code_challenge_method: "S256",
  });
  const toPage = await jar.go("authorize", `${issuer}/oauth/authorize?${query}`);
  const pageUrl = new URL(toPage.headers.get("location") ?? "", issuer).href;
  const page = await (await jar.go("sign-in page", pageUrl)).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
  const posted = await jar.go("sign-in post (key checked)", pageUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: issuer },
    body: new URLSearchParams({ csrf, action: "allow", key: SANDBOX_API_KEY }).toString(),
  });
  // The form is answered with a page of ours that moves on by a meta refresh (sign-in.ts).
  const next = await jar.go("continue page", new URL(posted.headers.get("location") ?? "", issuer).href);
  const resume = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(await next.text())?.[1] ?? "";
  const resumed = await jar.go("resume", new URL(resume.replaceAll("&amp;", "&"), issuer).href);
  const code = new URL(resumed.headers.get("location") ?? "").searchParams.get("code") ?? "";
  const token = await jar.go("code exchange", `${issuer}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      client_id,
      code_verifier: VERIFIER,
    }).toString(),
  });
  const { access_token } = (await token.json()) as { access_token?: string };
  if (access_token === undefined) throw new Error("the bench sign-in got no access token");
  return { token: access_token, steps: jar.steps };
}

/** SESSIONS sessions, each calling list_models CALLS times; every latency. */
async function load(url: string, bearers: string[], calls: number): Promise<number[]> {
  const transports: StreamableHTTPClientTransport[] = [];
  const clients = await Promise.all(
    bearers.map(async (bearer) => {
      const c = new Client({ name: "bench", version: "1.0.0" });
      const requestInit = { headers: { authorization: `Bearer ${bearer}` } };
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit });
      transports.push(transport);
      await c.connect(transport);
      return c;
    }),
  );
  await Promise.all(clients.map((c) => c.callTool({ name: "list_models", arguments: {} })));
  const latencies: number[] = [];
  await Promise.all(
    clients.map(async (c) => {
      for (let i = 0; i < calls; i++) {
        const started = performance.now();
        const r = await c.callTool({ name: "list_models", arguments: {} });
        if (r.isError) throw new Error("list_models failed");
        latencies.push(performance.now() - started);
      }
    }),
  );
  // Ended (DELETE), not only dropped: the next round opens as many sessions under the same key.
  await Promise.all(transports.map((t) => t.terminateSession()));
  await Promise.all(clients.map((c) => c.close()));
  return latencies;
}

export async function oauthCosts(
  serviceEnv: Record<string, string>,
  sessions: number,
  calls: number,
): Promise<void> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const { GENERATION_API_KEY: _unused, ...env } = serviceEnv;
  const oauth = await startHttpCli(["--auth", "oauth", "--port", String(port)], {
    ...env,
    GENERATION_PUBLIC_URL: issuer,
    GENERATION_AUTH_SECRET: Buffer.alloc(32, 3).toString("base64"),
    GENERATION_TRUSTED_PROXIES: "127.0.0.1",
  });
  const key = await startHttpCli([], serviceEnv);
  try {
    const totals: number[] = [];
    const perStep: Record<string, number[]> = {};
    const tokens: string[] = [];
    for (let i = 0; i < Math.max(SIGN_INS, sessions); i++) {
      const { token, steps } = await signIn(issuer, i);
      tokens.push(token);
      if (i >= SIGN_INS) continue;
      totals.push(Object.values(steps).reduce((a, b) => a + b, 0));
      for (const [step, t] of Object.entries(steps)) perStep[step] = [...(perStep[step] ?? []), t];
    }
    print(`(e) the OAuth sign-in flow's server time, ${SIGN_INS} sign-ins over loopback HTTP (no browser)`);
    print(`    whole flow p50 ${ms(percentile(totals, 50))}, p99 ${ms(percentile(totals, 99))}`);
    print(
      `    per step (p50): ${Object.entries(perStep)
        .map(([step, xs]) => `${step} ${ms(percentile(xs, 50))}`)
        .join(", ")}`,
    );
    // Alternate the two modes so neither gets a warmer machine.
    const keyed: number[] = [];
    const tokened: number[] = [];
    for (let round = 0; round < 2; round++) {
      keyed.push(...(await load(key.url, Array(sessions).fill(SANDBOX_API_KEY), calls)));
      tokened.push(...(await load(oauth.url, tokens.slice(0, sessions), calls)));
    }
    const line = (label: string, xs: number[]) =>
      `    ${label} p50 ${ms(percentile(xs, 50))}, p99 ${ms(percentile(xs, 99))}`;
    print(
      `(f) token validation per MCP request: ${sessions} sessions x ${calls} list_models calls, twice, per mode`,
    );
    print(line("--auth key   (Bearer lgk_…):  ", keyed));
    print(line("--auth oauth (access tokens): ", tokened));
    print(
      `    added by token validation: p50 ${ms(percentile(tokened, 50) - percentile(keyed, 50))}, p99 ${ms(percentile(tokened, 99) - percentile(keyed, 99))}`,
    );
    // One session alone: the validation's own cost (two reads of the store), without queueing.
    const soloKey = await load(key.url, [SANDBOX_API_KEY], 200);
    const soloToken = await load(oauth.url, tokens.slice(0, 1), 200);
    print(line("one session, --auth key:      ", soloKey));
    print(line("one session, --auth oauth:    ", soloToken));
  } finally {
    await Promise.all([oauth.stop(), key.stop()]);
  }
}

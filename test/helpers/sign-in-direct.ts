/**
 * `--auth oauth` sign-ins without a browser, for tests and benchmarks that need many users: the
 * browser's part of the flow over raw HTTP (cookies kept, redirects not followed), the user's part
 * being the sign-in page's form POST with their key. A host registers once (`registerClient`, as
 * claude.ai's one client serves all its users) and each user then authorizes it with their own key
 * (`signInDirect`): the authorization request, the sign-in page (for its CSRF token), the form post
 * (the key checked with the service), the resume, the code exchange. Each step is timed. Many
 * users come from many addresses: `userAddress(i)` is user i's, sent as X-Forwarded-For, which a
 * server started with GENERATION_TRUSTED_PROXIES=127.0.0.1 (`FORWARDED_ENV`) believes, so each
 * user's authorization request counts against their own rate (src/transports/oauth/rate-limit.ts).
 */

/** The setting under which a loopback server believes `userAddress`. */
export const FORWARDED_ENV = { GENERATION_TRUSTED_PROXIES: "127.0.0.1" } as const;

/** User i's address, in the range RFC 2544 sets aside for benchmarks (198.18.0.0/15). */
export const userAddress = (i: number): string => `198.${18 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;

export const DIRECT_REDIRECT = "http://127.0.0.1:9/callback";
/** RFC 7636's example pair (appendix B). */
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

/** A browser's part of the flow: cookies kept, redirects not followed, each request timed. */
/**
 * fetch as a well-behaved client does: a 503 with `Retry-After` (the strangers' share,
 * src/transports/http-anonymous.ts, while many sign in at once) is retried after it, for up to 2 minutes.
 */
export async function politeFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const giveUp = performance.now() + 120_000;
  for (;;) {
    const res = await fetch(url, init);
    const after = Number(res.headers.get("retry-after"));
    if (res.status !== 503 || !(after > 0) || performance.now() > giveUp) return res;
    await res.body?.cancel();
    await new Promise((r) => setTimeout(r, after * 1000 * (0.5 + Math.random())));
  }
}

class Jar {
  readonly #cookies = new Map<string, string>();
  readonly steps: Record<string, number> = {};

  /** `from`: the client address a trusted proxy would forward. */
  constructor(private readonly from?: string) {}

  async go(step: string, url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.from !== undefined) headers.set("x-forwarded-for", this.from);
    if (this.#cookies.size > 0)
      headers.set("cookie", [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const started = performance.now();
    const res = await politeFetch(url, { ...init, headers, redirect: "manual" });
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

/** Registers a public client (dynamic registration) redirecting to `redirect`; its client ID. */
export async function registerClient(issuer: string, redirect = DIRECT_REDIRECT): Promise<string> {
  const res = await politeFetch(`${issuer}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      redirect_uris: [redirect],
      token_endpoint_auth_method: "none",
      client_name: "direct",
    }),
  });
  const body = (await res.json()) as { client_id?: string };
  if (body.client_id === undefined) throw new Error(`registration refused (${res.status})`);
  return body.client_id;
}

export interface DirectSignIn {
  access: string;
  refresh: string | undefined;
  /** Milliseconds per step of the flow. */
  steps: Record<string, number>;
}

/**
 * One user signs in with `key` through the sign-in page's form, for `clientId`; their tokens.
 * `from`: their address (`userAddress`), for a server that believes it (`FORWARDED_ENV`).
 */
export async function signInDirect(
  issuer: string,
  clientId: string,
  key: string,
  o: { redirect?: string; from?: string } = {},
): Promise<DirectSignIn> {
  const redirect = o.redirect ?? DIRECT_REDIRECT;
  const jar = new Jar(o.from);
  const query = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirect,
    scope: "mcp",
    resource: `${issuer}/mcp`,
    code_challenge: CHALLENGE,
    code_challenge_method: "S256",
  });
  const toPage = await jar.go("authorize", `${issuer}/oauth/authorize?${query}`);
  const location = toPage.headers.get("location");
  // A refusal (429 past a rate, say) names itself rather than failing later at the form.
  if (location === null)
    throw new Error(
      `the authorization request was refused (${toPage.status}): ${(await toPage.text()).slice(0, 200)}`,
    );
  const pageUrl = new URL(location, issuer).href;
  const page = await (await jar.go("sign-in page", pageUrl)).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
  const posted = await jar.go("sign-in post (key checked)", pageUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: issuer },
    body: new URLSearchParams({ csrf, action: "allow", key }).toString(),
  });
  const next = posted.headers.get("location");
  if (next === null) throw new Error(`the sign-in form was refused (${posted.status})`);
  // The form is answered with the redirect to the resume step, or with a page of the server's
  // own that moves on to it by a meta refresh (so that no redirect follows a form submission).
  let resumed = await jar.go("resume", new URL(next, issuer).href);
  const refresh =
    resumed.status === 200
      ? /http-equiv="refresh" content="0;url=([^"]+)"/.exec(await resumed.text())?.[1]
      : undefined;
  if (refresh !== undefined) {
    resumed = await jar.go("resume", new URL(refresh.replaceAll("&amp;", "&"), issuer).href);
  }
  const code = new URL(resumed.headers.get("location") ?? "", issuer).searchParams.get("code") ?? "";
  const token = await jar.go("code exchange", `${issuer}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirect,
      client_id: clientId,
      code_verifier: VERIFIER,
    }).toString(),
  });
  const tokens = (await token.json()) as { access_token?: string; refresh_token?: string };
  if (tokens.access_token === undefined) throw new Error(`no access token (${token.status})`);
  return { access: tokens.access_token, refresh: tokens.refresh_token, steps: jar.steps };
}

/** Runs `task` for each item with at most `width` at once; the results in order. */
export async function inParallel<T, R>(
  items: readonly T[],
  width: number,
  task: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await task(items[i] as T, i);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

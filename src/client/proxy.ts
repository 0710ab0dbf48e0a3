/**
 * Proxy support from the standard environment variables. undici is imported only when a
 * proxy variable is set, so the common path costs nothing at start-up.
 */

/** The fetch signature the client takes (injected in tests, undici through a proxy, or global). */
export type FetchLike = typeof fetch;

const PROXY_VARS = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] as const;

export function proxyFromEnv(env: NodeJS.ProcessEnv): boolean {
  return PROXY_VARS.some((name) => (env[name] ?? "").trim() !== "");
}

let cached: Promise<FetchLike> | undefined;
let direct: Promise<FetchLike> | undefined;

/** undici's fetch bound to one EnvHttpProxyAgent (which also honours NO_PROXY). */
export function proxyFetch(): Promise<FetchLike> {
  cached ??= import("undici").then(({ EnvHttpProxyAgent, fetch }) => {
    const dispatcher = new EnvHttpProxyAgent();
    return ((input: Parameters<FetchLike>[0], init?: RequestInit) =>
      fetch(input as never, { ...(init as object), dispatcher } as never)) as unknown as FetchLike;
  });
  return cached;
}

/** undici's own fetch, without a proxy (used for streamed uploads; see ServiceHttp.uploadFetch). */
export function undiciFetch(): Promise<FetchLike> {
  direct ??= import("undici").then(({ fetch }) => fetch as unknown as FetchLike);
  return direct;
}

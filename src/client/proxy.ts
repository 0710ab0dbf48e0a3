/**
 * Proxy support from the standard environment variables. undici is imported only when a
 * proxy variable is set, so the common path costs nothing at start-up.
 */
import { lazy } from "../shared/lazy.js";

/** The fetch signature the client takes (injected in tests, undici through a proxy, or global). */
export type FetchLike = typeof fetch;

const PROXY_VARS = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] as const;

export function proxyFromEnv(env: NodeJS.ProcessEnv): boolean {
  return PROXY_VARS.some((name) => (env[name] ?? "").trim() !== "");
}

/** undici's fetch bound to one EnvHttpProxyAgent (which also honours NO_PROXY). */
export const proxyFetch: () => Promise<FetchLike> = lazy(() =>
  import("undici").then(({ EnvHttpProxyAgent, fetch }) => {
    const dispatcher = new EnvHttpProxyAgent();
    return ((input: Parameters<FetchLike>[0], init?: RequestInit) =>
      fetch(input as never, { ...(init as object), dispatcher } as never)) as unknown as FetchLike;
  }),
);

/** undici's own fetch, without a proxy (used for streamed uploads; see ServiceHttp.uploadFetch). */
export const undiciFetch: () => Promise<FetchLike> = lazy(() =>
  import("undici").then(({ fetch }) => fetch as unknown as FetchLike),
);

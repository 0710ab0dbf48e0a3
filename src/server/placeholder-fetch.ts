/**
 * A fetch that maps one placeholder origin to an address known only later. The embedded sandbox
 * is started on the first request (its media encoders are a good part of a cold start otherwise),
 * so until then the service client addresses the placeholder and this rewrites each request.
 */
export function placeholderFetch(placeholder: string, resolve: () => Promise<string>): typeof fetch {
  const origin = new URL(placeholder).origin;
  return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.origin !== origin) return fetch(input, init);
    const target = new URL(url.pathname + url.search, await resolve());
    return fetch(input instanceof Request ? new Request(target, input) : target, init);
  }) as typeof fetch;
}

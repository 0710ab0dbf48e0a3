/** A service some distance away, for `npm run bench`: a loopback proxy that delays each request. */
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/** Forwards every request to `target` after holding it `delayMs`. */
export async function delayProxy(
  target: string,
  delayMs: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const server = createServer((req, res) => {
    setTimeout(() => {
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
          agent,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      out.on("error", () => res.destroy());
      req.pipe(out);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

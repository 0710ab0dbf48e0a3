/**
 * A service some distance away, for `npm run bench`: a loopback proxy that delays each request and
 * may carry request bodies no faster than a given rate (an uplink).
 */
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { Transform } from "node:stream";

/** Passes bytes on no faster than `bytesPerSecond`, measured from the first byte. */
function throttle(bytesPerSecond: number): Transform {
  let started = 0;
  let sent = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      started ||= performance.now();
      sent += chunk.byteLength;
      const due = started + (sent / bytesPerSecond) * 1000 - performance.now();
      setTimeout(() => done(null, chunk), Math.max(0, due));
    },
  });
}

/** Forwards every request to `target` after holding it `delayMs`; its body at `bytesPerSecond` at most. */
export async function delayProxy(
  target: string,
  delayMs: number,
  o: { bytesPerSecond?: number } = {},
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
      if (o.bytesPerSecond === undefined) req.pipe(out);
      else req.pipe(throttle(o.bytesPerSecond)).pipe(out);
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

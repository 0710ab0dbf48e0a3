/**
 * Where the HTTP server takes its connections: on Linux, several listening sockets on one port
 * (SO_REUSEPORT, which the kernel spreads new connections over), each handing what it accepts to
 * the one HTTP server. Why: libuv accepts one connection per listening socket per turn of the
 * event loop (libuv 1.45, "unix: don't accept() connections in a loop"), so while the loop is busy
 * a crowd of connections from anyone (a flood's workers, each waiting in the queue for its answer)
 * stands in one FIFO queue ahead of every newcomer, for as many turns as it is long: seconds under
 * the hostile mix (docs/benchmarks.md). With ACCEPT_SOCKETS queues the turn accepts that many.
 * Elsewhere, or where the option is refused, one socket, as before.
 */
import type { Server } from "node:http";
import { type AddressInfo, createServer, type Server as NetServer } from "node:net";

/** Listening sockets on Linux: 16 cut the hostile mix's p99 about fivefold; 64 gained a quarter more. */
export const ACCEPT_SOCKETS = 16;

/** Listens on `port` (0: any free port) and `host`; `server.close()` closes every socket. */
export async function listenShared(server: Server, port: number, host: string): Promise<void> {
  const shared = process.platform === "linux";
  // A named port is first taken plainly and let go: a port in use (by another server of ours too,
  // whose sockets would otherwise let these join them and split its connections) fails as before.
  if (shared && port !== 0) {
    const probe = createServer();
    await listenOn(probe, { port, host });
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  }
  try {
    await listenOn(server, { port, host, reusePort: shared });
  } catch (error) {
    // An older Node refusing the option: one socket, as before.
    if (!shared) throw error;
    await listenOn(server, { port, host });
    return;
  }
  if (!shared) return;
  const bound = (server.address() as AddressInfo).port;
  const extras: NetServer[] = [];
  for (let i = 1; i < ACCEPT_SOCKETS; i++) {
    const extra = createServer((socket) => server.emit("connection", socket));
    try {
      await listenOn(extra, { port: bound, host, reusePort: true });
    } catch {
      break;
    }
    extras.push(extra);
  }
  // Closed as the server is: no connection may reach it through them once it stops listening.
  const close = server.close.bind(server);
  server.close = (callback?: (err?: Error) => void) => {
    for (const extra of extras) extra.close();
    return close(callback);
  };
}

function listenOn(
  server: NetServer,
  options: { port: number; host: string; reusePort?: boolean },
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

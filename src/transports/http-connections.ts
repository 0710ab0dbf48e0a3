/**
 * Connections, before any request or credential: a total and a share per client address, counted
 * from 'connection' to 'close', and the timeouts that end connections which hold a slot without
 * progress (headers too slow, a request too slow, kept alive idle). One address holding thousands
 * of idle connections would otherwise take every descriptor of the process. A connection past a
 * bound is answered a short 503 naming it before anything is parsed, and closed `refusedHoldS`
 * later (a client that reads the answer closes it sooner). Why not at once: libuv accepts one
 * connection per turn of the event loop (libuv 1.45, "unix: don't accept() connections in a
 * loop"), so a client that reopens each refused connection the moment it closes keeps its surplus
 * in the accept queue for good, and every newcomer waits behind it for as many turns: seconds while
 * the loop is busy (docs/benchmarks.md, the hostile mix). Held instead, the surplus waits outside the
 * queue. At most `connectionsPerAddress` refused connections are held in all; past that they close
 * at once. A trusted proxy's connections (GENERATION_TRUSTED_PROXIES) count only in the total:
 * they carry many users.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { ServeLimits } from "../config/serve-limits.js";
import { type LimitLog, Shares } from "../shared/fair-shares.js";

/** What a refused connection is told to wait. */
export const CONNECTION_RETRY_S = 10;
/** Owner of a trusted proxy's connections: they count in the total only. */
const PROXIED = "\u0000proxied";

export interface ConnectionGuard {
  /** Connections open now (for tests and diagnostics). */
  readonly open: number;
}

export function guardConnections(
  server: Server,
  limits: ServeLimits,
  log: LimitLog,
  isProxy: (address: string) => boolean = () => false,
): ConnectionGuard {
  server.headersTimeout = limits.headersTimeoutS * 1000;
  server.requestTimeout = Math.max(limits.requestTimeoutS, limits.headersTimeoutS) * 1000;
  server.keepAliveTimeout = limits.keepAliveTimeoutS * 1000;
  const perAddress = new Shares(limits.connections, limits.connectionsPerAddress);
  const proxied = new Shares(limits.connections, limits.connections);
  const holding = { now: 0, max: limits.connectionsPerAddress, ms: limits.refusedHoldS * 1000 };
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "unknown";
    const viaProxy = isProxy(address);
    const owner = viaProxy ? PROXIED : address;
    // One Shares for the total: proxied connections count in it under one owner with no share.
    const pool = viaProxy ? proxied : perAddress;
    const refusal =
      perAddress.used + proxied.used >= limits.connections
        ? { bound: "total" as const, limit: limits.connections }
        : pool.take(owner);
    if (refusal !== undefined) {
      const limit = refusal.bound === "share" ? "connectionsPerAddress" : "connections";
      log.note(limit, `address ${address}`, `refused a connection: ${limit} ${refusal.limit} reached`);
      refuse(socket, limit, refusal.limit, holding);
      return;
    }
    socket.once("close", () => pool.give(owner));
    // A connection that never sends a request is ended after the header timeout too.
    idleUntilFirstRequest(socket, limits.headersTimeoutS * 1000);
  });
  return {
    get open() {
      return perAddress.used + proxied.used;
    },
  };
}

/** Connections answered a 503 here: a request they already sent is not served. */
const refusedSockets = new WeakSet<Socket>();
export const wasRefused = (socket: Socket): boolean => refusedSockets.has(socket);

/** Refused connections held open now, the most held at once, and for how long. */
interface Holding {
  now: number;
  readonly max: number;
  readonly ms: number;
}

/** Answers a connection past a bound with a 503 naming it; closes it once held (see above). */
function refuse(socket: Socket, limit: string, max: number, holding: Holding): void {
  refusedSockets.add(socket);
  const body = JSON.stringify({
    jsonrpc: "2.0",
    error: {
      code: -32000,
      message: `Service Unavailable: too many connections (${limit}, ${max}); retry after ${CONNECTION_RETRY_S} s`,
    },
    id: null,
  });
  socket.on("error", () => {});
  const answer = `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: ${CONNECTION_RETRY_S}\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  if (holding.now >= holding.max) {
    socket.end(answer);
    socket.destroySoon();
    return;
  }
  // No FIN yet: a client that closes only when the server does waits here, not in the queue.
  socket.write(answer);
  holding.now++;
  const timer = setTimeout(() => socket.destroy(), holding.ms);
  timer.unref();
  socket.once("close", () => {
    holding.now--;
    clearTimeout(timer);
  });
}

/**
 * Ends a connection that has sent no byte within `ms`. Read through bytesRead, not a 'data'
 * listener: the HTTP parser may consume the socket natively, where no 'data' event is emitted.
 */
function idleUntilFirstRequest(socket: Socket, ms: number): void {
  const timer = setTimeout(() => {
    if (socket.bytesRead === 0) socket.destroy();
  }, ms);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
}

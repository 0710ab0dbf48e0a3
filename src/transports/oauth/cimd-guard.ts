/**
 * SSRF guards for Client ID Metadata Documents: a `client_id` that is an https URL makes this
 * server fetch it, so an attacker could aim that fetch at the deployment's own network. Before any
 * fetch, the host's addresses are resolved and every special-use one (loopback, private,
 * link-local, CGNAT, multicast, reserved) is refused with a reason; oidc-provider then fetches
 * without redirects, within 2.5 s and 5 KiB, through a dispatcher that checks the address it
 * actually connected to (safe against DNS rebinding between our lookup and its connect), and
 * caches the document per its Cache-Control (here 1 minute to 1 hour).
 * Loopback documents are allowed only when testing on loopback (GENERATION_PUBLIC_URL on http
 * loopback); private and link-local addresses never are.
 */
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { errors } from "oidc-provider";

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** Node's BlockList matches IPv4 rules against IPv4-mapped IPv6 addresses too (::ffff:a.b.c.d). */
const SPECIAL = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  SPECIAL.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const)
  SPECIAL.addSubnet(net, prefix, "ipv6");

function family(address: string): "ipv4" | "ipv6" {
  return isIP(address) === 6 ? "ipv6" : "ipv4";
}

/** Whether an address may be fetched from (an IPv4-mapped IPv6 address is judged as its IPv4). */
export function addressAllowed(address: string, allowLoopback: boolean): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const a = mapped ?? address;
  if (allowLoopback && LOOPBACK.check(a, family(a))) return true;
  return !SPECIAL.check(a, family(a));
}

/** oidc-provider's allowFetch: true, or an invalid_client error that says why. */
export async function cimdGuard(clientId: string, allowLoopback: boolean): Promise<boolean> {
  const url = URL.parse(clientId);
  if (url === null || url.protocol !== "https:") {
    throw new errors.InvalidClient("a client_id metadata document must be served over https");
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  try {
    addresses = isIP(host)
      ? [host]
      : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    throw new errors.InvalidClient("the client_id metadata document's host does not resolve");
  }
  if (addresses.length === 0 || !addresses.every((a) => addressAllowed(a, allowLoopback))) {
    throw new errors.InvalidClient(
      "the client_id metadata document's host resolves to a private, loopback or reserved address, which this server does not fetch",
    );
  }
  return true;
}

/**
 * The fetch oidc-provider uses. When testing on loopback its connect-time guard (which refuses
 * loopback) is set aside: cimdGuard has already refused every other special-use address.
 */
export function cimdFetch(allowLoopback: boolean): typeof fetch {
  return (url, options) => {
    if (!allowLoopback || options === undefined) return globalThis.fetch(url, options);
    const { dispatcher: _ignored, ...rest } = options as RequestInit & { dispatcher?: unknown };
    return globalThis.fetch(url, rest);
  };
}

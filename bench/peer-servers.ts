/** Peer MCP servers that `npm run bench` times next to ours (bench/peers, installed on first run). */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const PEERS_DIR = fileURLToPath(new URL("./peers/", import.meta.url));
/**
 * Peer servers, each run as `node <its bin>` (npx would add its own start-up). Both answer tools/list
 * without the network (checked with no network namespace and with strace: no inet connect), so the
 * figure is start-up alone. replicate-mcp refuses to start without a token; a dummy one is never sent.
 */
const PEERS = [
  { pkg: "replicate-mcp", args: [], env: { REPLICATE_API_TOKEN: "r8_bench-dummy-never-sent" } },
  { pkg: "@modelcontextprotocol/server-everything", args: ["stdio"], env: {} },
];

export interface Runner {
  label: string;
  args: string[];
  env: Record<string, string>;
  tools?: number;
  /** Bytes of the tools/list result, as JSON. */
  bytes?: number;
  times: number[];
}

/** Peers ready to spawn (installing bench/peers once), and why any are left out. */
export function preparePeers(print: (line: string) => void): { peers: Runner[]; out: string[] } {
  const manifest = (pkg: string) => join(PEERS_DIR, "node_modules", pkg, "package.json");
  if (!PEERS.every((p) => existsSync(manifest(p.pkg)))) {
    print("    installing peers once: npm ci --prefix bench/peers (into bench/peers/node_modules)");
    const npm = ["ci", "--prefix", PEERS_DIR, "--ignore-scripts", "--no-audit", "--no-fund"];
    const ran = spawnSync("npm", npm, { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
    if (ran.status !== 0) {
      const why = ran.error?.message ?? ran.stderr.trim().split("\n").at(-1) ?? `exit ${ran.status}`;
      return { peers: [], out: [`peers left out: npm ci failed: ${why}`] };
    }
  }
  const peers: Runner[] = [];
  const out: string[] = [];
  for (const peer of PEERS) {
    try {
      const pkg = JSON.parse(readFileSync(manifest(peer.pkg), "utf8")) as {
        version: string;
        bin: string | Record<string, string>;
      };
      const bin = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin)[0];
      if (bin === undefined) throw new Error("its package.json names no bin");
      const script = join(PEERS_DIR, "node_modules", peer.pkg, bin);
      peers.push({
        label: `${peer.pkg} ${pkg.version}`,
        args: [script, ...peer.args],
        env: peer.env,
        times: [],
      });
    } catch (error) {
      out.push(`peer ${peer.pkg} left out: ${(error as Error).message}`);
    }
  }
  return { peers, out };
}

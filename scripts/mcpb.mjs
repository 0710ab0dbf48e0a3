// `npm run mcpb`: builds the MCPB bundle Claude Desktop installs by double-click. The bundle holds
// manifest.json, the esbuild bundle, README and LICENSE, and no node_modules: everything the server
// loads is inlined, and on Node 22.13+ (the runtime the manifest asks for) the ledger uses the
// built-in node:sqlite, so there is no platform-specific binary. Validates, then packs.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const stage = join(root, ".tmp", "mcpb");
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const out = join(root, ".tmp", `generation-mcp-${version}.mcpb`);
const mcpb = (...args) =>
  execFileSync(
    process.execPath,
    [join(root, "node_modules", "@anthropic-ai", "mcpb", "dist", "cli", "cli.js"), ...args],
    {
      cwd: root,
      stdio: "inherit",
    },
  );

execFileSync(process.execPath, [join(root, "scripts", "bundle.mjs")], { cwd: root, stdio: "inherit" });
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
for (const f of ["manifest.json", "README.md", "LICENSE", "dist"]) {
  cpSync(join(root, f), join(stage, f), { recursive: true });
}
mcpb("validate", join(stage, "manifest.json"));
mcpb("pack", stage, out);
console.error(`MCPB bundle: ${out}`);

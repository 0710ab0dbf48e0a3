/**
 * The package's version, package.json's: the one source of everything that names it (--version,
 * the start message, serverInfo; the media viewer's appInfo is inlined the same way by
 * scripts/build-viewer.mjs). The bundle has it inlined at build time (scripts/bundle.mjs defines
 * GENERATION_MCP_VERSION); run from source, package.json is read once.
 */
/** node:fs as CommonJS: see values.ts. */
const { readFileSync } = process.getBuiltinModule("node:fs");

declare const GENERATION_MCP_VERSION: string | undefined;

let fromSource: string | undefined;

export function packageVersion(): string {
  if (typeof GENERATION_MCP_VERSION === "string") return GENERATION_MCP_VERSION;
  fromSource ??= readPackageVersion();
  return fromSource;
}

/** From src/config/, the package root is two folders up. */
function readPackageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      name?: string;
      version?: string;
    };
    if (pkg.name === "generation-mcp" && typeof pkg.version === "string") return pkg.version;
  } catch {
    // not run from the package
  }
  return "unknown";
}

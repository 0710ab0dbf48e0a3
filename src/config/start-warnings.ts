/**
 * What is worth saying at start about a configuration that is well formed but will not work as
 * meant: directories that do not exist, an output directory that saves cannot reach. The server
 * still starts (uploads and generation work without them); these lines go to stderr. A setting the
 * chosen mode ignores is said the same way.
 */
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { isLoopbackHost } from "./callers.js";
import type { Config } from "./config-types.js";

/** node:fs as CommonJS: see values.ts. */
const { realpathSync, statSync } = process.getBuiltinModule("node:fs");

/** `dir` with its existing part's links resolved, so two spellings of one place compare equal. */
function resolved(dir: string): string {
  for (let at = dir; ; at = dirname(at)) {
    try {
      return join(realpathSync(at), relative(at, dir));
    } catch {
      if (dirname(at) === at) return dir;
    }
  }
}

/** Inside by path segments, never by string prefix (/a/bc is not inside /a/b). */
function inside(dir: string, p: string): boolean {
  const rel = relative(dir, p);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Saves go only inside GENERATION_FILES, so an output directory outside them would fail at the
 * first save, after the user has paid for the work: say so at start (the save refuses before any
 * submission too). The client's roots can only narrow the directories, never widen them.
 */
export function outputDirWarnings(config: Config, source: { field: string } | undefined): string[] {
  // Unset, it goes under a directory in force (src/calls/paid/saving.ts): nothing to warn about.
  if (config.outputDir === undefined) return [];
  const out = resolved(config.outputDir);
  if (config.files.some((dir) => inside(resolved(dir), out))) return [];
  return [
    `${source?.field ?? "GENERATION_OUTPUT_DIR"}: outside every directory of GENERATION_FILES, so outputs cannot be saved (save: true and save_outputs will refuse); put it inside one of them, or add it to GENERATION_FILES`,
  ];
}

/**
 * A directory that does not exist is skipped by the file tools, so a typo would only show as
 * "outside the allowed directories" much later: say so at start, by position, and keep serving.
 */
export function directoryWarnings(config: Config, source: { field: string } | undefined): string[] {
  if (source === undefined) return [];
  const problems: string[] = [];
  config.files.forEach((dir, i) => {
    let problem: string | undefined;
    try {
      if (!statSync(dir).isDirectory()) problem = "is not a directory";
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      problem = code === "ENOENT" ? "does not exist" : `cannot be read (${code ?? "error"})`;
    }
    if (problem !== undefined) {
      problems.push(
        `${source.field}: entry ${i + 1} of ${config.files.length} ${problem}; tools will not read or save there`,
      );
    }
  });
  return problems;
}

const OAUTH_ONLY = new Set<keyof Config>([
  "accessTokenTtl",
  "refreshTokenTtl",
  "grantIdleTtl",
  "refreshGrace",
]);
const HTTP_ONLY = new Set<keyof Config>([
  "host",
  "port",
  "publicUrl",
  "allowedHosts",
  "trustedProxies",
  ...OAUTH_ONLY,
]);

/** The limits in GENERATION_HTTP_LIMITS that only `--auth oauth` uses (the sign-in figures). */
const OAUTH_LIMITS = new Set(["signInsPerMinute", "signInReserve"]);

/** The names inside GENERATION_HTTP_LIMITS the mode does not use (the ledger's day budget applies everywhere). */
function ignoredLimits(config: Config): string | undefined {
  const set = Object.keys(config.serveLimits ?? {});
  const http = set.filter((name) => !name.startsWith("ledger"));
  if (config.transport === "stdio" && http.length > 0)
    return `${http.join(", ")} ignored on stdio (they apply to --transport http)`;
  const oauth = set.filter((name) => OAUTH_LIMITS.has(name));
  if (config.auth === "key" && oauth.length > 0)
    return `${oauth.join(", ")} ignored with --auth key (they apply to --auth oauth)`;
  return undefined;
}

/** Why the chosen mode does not use a setting that was given, or undefined when it does. */
function ignoredBecause(key: keyof Config, config: Config): string | undefined {
  if (key === "serveLimits") return ignoredLimits(config);
  if (config.transport === "stdio" && HTTP_ONLY.has(key))
    return "ignored on stdio (it applies to --transport http)";
  if (config.auth === "key" && OAUTH_ONLY.has(key))
    return "ignored with --auth key (it applies to --auth oauth)";
  if (config.sandbox && (key === "baseUrl" || key === "apiKey")) {
    return "ignored with --sandbox (the embedded service and its own key are used)";
  }
  if (key !== "apiKey" || config.transport !== "http") return undefined;
  if (config.auth === "oauth") return "ignored with --auth oauth (each user signs in with their own key)";
  if (!isLoopbackHost(config.host)) return "ignored off loopback; each session must send its own Bearer key";
  return undefined;
}

/**
 * A setting given (by flag or variable) that the chosen transport, auth mode or --sandbox does not
 * use would otherwise be silently without effect: one line each, naming it, never its value.
 */
export function ignoredSettingWarnings(
  config: Config,
  given: ReadonlyArray<{ key: keyof Config; field: string }>,
): string[] {
  return given.flatMap(({ key, field }) => {
    const why = ignoredBecause(key, config);
    return why === undefined ? [] : [`${field}: ${why}`];
  });
}

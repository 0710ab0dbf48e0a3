/**
 * The `generation-mcp` command. Startup speed matters (a host spawns us and waits for tools/list),
 * so everything past the configuration is imported on demand: the sandbox only with --sandbox or
 * `sandbox`, the HTTP stack only with --transport http, the ledger's SQLite only on first use.
 */
import {
  type Command,
  type Config,
  ConfigError,
  parseCommand,
  publicHostnames,
  usage,
} from "./config/index.js";
import { trustedProxyList } from "./config/oauth-settings.js";
import { packageVersion } from "./config/package-version.js";
import type { LazyLedger } from "./ledger/lazy-ledger.js";
import { LedgerError } from "./ledger/ledger-errors.js";
import { lazy } from "./shared/lazy.js";

// What a command or transport needs, loaded when it is chosen (the header says why).
const engineStack = lazy(() => import("./transports/engine.js"));
const assembly = lazy(() => import("./surface/assemble.js"));
const stdioStack = lazy(() => import("./transports/stdio.js"));
const httpStack = lazy(() => import("./transports/http-server.js"));
const stderrScrub = lazy(() => import("./transports/scrub-writes.js"));
const oauthStack = lazy(() => import("./transports/oauth/oauth-start.js"));
const sandboxServer = lazy(() => import("./sandbox/sandbox.js"));

const EXIT_CONFIG = 2;
const WARM_UP_DELAY_MS = 1_000;

function fail(message: string, code = 1): never {
  process.stderr.write(`generation-mcp: ${message}\n`);
  process.exit(code);
}

/** A port in use or a host we cannot bind is a configuration problem: one line, exit 2. */
function failToBind(error: unknown, host: string, port: number): never {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE") fail(`--port: ${host}:${port} is already in use`, EXIT_CONFIG);
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EACCES") {
    fail(`--host/--port: cannot bind to ${host}:${port} (${code})`, EXIT_CONFIG);
  }
  throw error;
}

/**
 * Once the first tools/list is likely answered, open the ledger in the background: a store that
 * cannot be opened is reported now (one line on stderr; read-only tools keep working) rather than
 * at the first paid call.
 */
function warmUpSoon(engines: { warmUp(): Promise<void> }): void {
  setTimeout(() => {
    engines.warmUp().catch((error: unknown) => {
      const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
      // A Node without node:sqlite does not heal by retrying: say how to fix it instead.
      console.error(
        error instanceof LedgerError && error.code === "LEDGER_NO_SQLITE"
          ? `generation-mcp: ${message}. To fix: ${error.action}`
          : `generation-mcp: the ledger is not usable yet (${message}); paid tools will retry it`,
      );
    });
  }, WARM_UP_DELAY_MS).unref();
}

/**
 * A configured key the service refuses (revoked, expired, unknown) is said on stderr soon after
 * start, in the background, rather than found by the first paid call; nothing waits for it, and
 * paid calls under it are refused locally from then on (src/calls/paid/paid-call.ts).
 */
function checkKeySoon(check: () => Promise<import("./transports/engine.js").KeyCheck>): void {
  setTimeout(() => {
    check().then(
      (result) => {
        if (!result.ok && result.code === "INVALID_API_KEY")
          console.error(
            "generation-mcp: the service refused the key in GENERATION_API_KEY (INVALID_API_KEY: revoked, expired or mistyped); paid tools refuse until it is set to a key the service accepts and the server restarted",
          );
      },
      () => undefined,
    );
  }, WARM_UP_DELAY_MS).unref();
}

async function serveStdio(config: Config): Promise<void> {
  const [{ createEngines }, { createMcpServer, taskFeedFor }, { serveOverStdio }, { scrubWrites }] =
    await Promise.all([engineStack(), assembly(), stdioStack(), stderrScrub()]);
  const engines = await createEngines(config);
  // The service may echo a key in an error that ends up logged.
  scrubWrites(process.stderr, (text) => engines.scrub(text));
  // The key, from the environment, checked once: its engine serves the connection.
  const key = engines.defaultApiKey;
  if (key === undefined) fail("GENERATION_API_KEY: required on stdio", EXIT_CONFIG);
  const engine = engines.forKey(key);
  serveOverStdio({
    createServer: (channel) => createMcpServer(engine, channel),
    taskFeed: taskFeedFor(engine),
    onClose: () => engines.close(),
  });
  warmUpSoon(engines);
  if (!config.sandbox) checkKeySoon(() => engines.checkKey(key));
}

/** --auth oauth: its token store (the ledger's), its engines and its gate; or exit saying why not. */
async function startOAuthOrExit(config: Config, ledger: LazyLedger) {
  const { startOAuth } = await oauthStack();
  try {
    return await startOAuth(config, ledger);
  } catch (error) {
    await ledger.close();
    const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
    fail(`--auth oauth: the token store could not be opened (${why})`);
  }
}

async function serveHttp(config: Config): Promise<void> {
  const [
    { createEngines, lazyLedger },
    { createMcpServer, taskFeedFor },
    { startHttpServer, isLoopbackHost },
    { scrubWrites },
  ] = await Promise.all([engineStack(), assembly(), httpStack(), stderrScrub()]);
  const ledger = lazyLedger(config);
  // --auth oauth makes its engines after its accounts: they end the sign-ins over a key the service refuses.
  const { engines, gate } =
    config.auth === "oauth"
      ? await startOAuthOrExit(config, ledger)
      : { engines: await createEngines(config, { ledger }), gate: undefined };
  // The service may echo a key in an error that ends up logged.
  scrubWrites(process.stderr, (text) => engines.scrub(text));
  // The proxies in front carry many users: their connections count in the total only.
  const proxies = config.trustedProxies === undefined ? undefined : trustedProxyList(config.trustedProxies);
  let handle: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    handle = await startHttpServer({
      host: config.host,
      port: config.port,
      ...(engines.defaultApiKey === undefined ? {} : { defaultApiKey: engines.defaultApiKey }),
      engineFor: (apiKey) => engines.forKey(apiKey),
      createServer: (engine, channel) => createMcpServer(engine, channel),
      taskFeed: (engine) => taskFeedFor(engine),
      health: () => engines.warmUp(),
      onError: (error) => console.error(`generation-mcp: ${error.message}`),
      onLimit: (line) => console.error(`generation-mcp: ${line}`),
      ...(config.serveLimits === undefined ? {} : { limits: config.serveLimits }),
      // Each key's share of sessions and listen streams counted by every replica on the store.
      shareStore: () => ledger.keyed(),
      ...(proxies === undefined
        ? {}
        : { isProxy: (address: string) => proxies.check(address, address.includes(":") ? "ipv6" : "ipv4") }),
      ...(gate === undefined ? {} : { oauth: gate }),
      publicHosts: publicHostnames(config),
    });
  } catch (error) {
    await engines.close();
    failToBind(error, config.host, config.port);
  }
  // Which names a front may forward in Host (the rest are refused): said once, for the operator.
  console.error(`generation-mcp: accepting Host: ${handle.hosts.join(", ")} (any port)`);
  process.stdout.write(
    gate === undefined
      ? connectionHelp(handle.url, config, engines.baseUrl, isLoopbackHost(config.host))
      : oauthHelp(handle.url, gate.resource, config, engines.baseUrl),
  );
  warmUpSoon(engines);
  const shutdown = () => {
    setTimeout(() => process.exit(0), 2_000).unref();
    void handle
      .close()
      .then(() => engines.close())
      .finally(() => process.exit(0));
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

/** What `npm start` prints: the endpoint and how to point the Inspector and Claude Desktop at us. */
/** What a session without a key runs under: the same rule as the HTTP server's (loopback only). */
function keyless(config: Config, loopback: boolean): string {
  if (!loopback) return "";
  if (config.sandbox) return "; without one, the sandbox's own key";
  return config.apiKey === undefined ? "" : "; without one, GENERATION_API_KEY";
}

/** What remote users may do with the server's files, naming no directory (remoteUsers in the config). */
function filesLine(config: Config): string[] {
  if (!config.remoteUsers) return [];
  return [
    config.files.length > 0
      ? "  files: each user (key) has a private folder under each GENERATION_FILES directory"
      : "  files: none for remote users (GENERATION_FILES unset): media come as base64 data or through the media viewer's upload, results as downloads",
  ];
}

function connectionHelp(url: string, config: Config, serviceUrl: string, loopback: boolean): string {
  const service = config.sandbox ? `the embedded sandbox at ${serviceUrl}` : serviceUrl;
  const desktop = {
    mcpServers: {
      generation: { command: "npx", args: ["-y", "mcp-remote", url] },
    },
  };
  return [
    `generation-mcp ${packageVersion()}: MCP over Streamable HTTP at ${url}`,
    `  service: ${service}`,
    `  auth: key (each session sends its service key as Authorization: Bearer lgk_…${keyless(config, loopback)})`,
    ...filesLine(config),
    "",
    "MCP Inspector (Node 22+; its Apps tab shows the media viewer):",
    `  npx @modelcontextprotocol/inspector --transport http --server-url ${url}`,
    "  then open the address it prints and turn on the server's switch to connect",
    "",
    "Claude Desktop (claude_desktop_config.json) through the mcp-remote bridge:",
    ...JSON.stringify(desktop, null, 2)
      .split("\n")
      .map((l) => `  ${l}`),
    "  or run it over stdio instead: see mcp.json.example",
    "",
    "Press Ctrl+C to stop.",
    "",
  ].join("\n");
}

/**
 * What `--auth oauth` prints: the public URL users add, and where this process listens (for the
 * TLS front, not for hosts: only the public URL is offered to claude.ai and ChatGPT).
 */
function oauthHelp(url: string, resource: string, config: Config, serviceUrl: string): string {
  const service = config.sandbox ? `the embedded sandbox at ${serviceUrl}` : serviceUrl;
  return [
    `generation-mcp ${packageVersion()}: MCP over Streamable HTTP, listening on ${new URL(url).host} for ${resource}`,
    `  service: ${service}`,
    "  auth: oauth (OAuth 2.1: users sign in once with their own service key)",
    ...filesLine(config),
    "",
    `Connector URL, for claude.ai, Claude Desktop (Settings → Connectors → Add custom connector), ChatGPT and every other host: ${resource}`,
    "Press Ctrl+C to stop.",
    "",
  ].join("\n");
}

async function main(): Promise<void> {
  let command: Command;
  try {
    command = parseCommand(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      // One line per malformed setting, all of them at once.
      for (const line of error.lines.slice(0, -1)) process.stderr.write(`generation-mcp: ${line}\n`);
      fail(error.lines.at(-1) ?? error.message, EXIT_CONFIG);
    }
    throw error;
  }
  switch (command.name) {
    case "help":
      process.stdout.write(usage());
      return;
    case "version":
      process.stdout.write(`${packageVersion()}\n`);
      return;
    case "sandbox": {
      const { runSandboxServer } = await sandboxServer();
      const running = await runSandboxServer({
        host: command.host,
        port: command.port,
        out: (line) => process.stdout.write(`${line}\n`),
      }).catch((error: unknown) => failToBind(error, command.host, command.port));
      const stop = () => void running.close().finally(() => process.exit(0));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      return;
    }
    case "serve":
      for (const warning of command.warnings) process.stderr.write(`generation-mcp: ${warning}\n`);
      return command.config.transport === "http" ? serveHttp(command.config) : serveStdio(command.config);
  }
}

main().catch((error: unknown) => {
  // One line, never a stack with values in it: the message of our own errors names the problem.
  fail(error instanceof Error ? error.message.split("\n")[0] || error.name : String(error));
});

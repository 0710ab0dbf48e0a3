/**
 * Configuration: what cli.ts and the server need from `src/config/`. The settings themselves
 * (variable, flag, reader, default, help) are listed once, in `src/config/settings.ts`.
 */
export { isLoopbackHost, publicHostnames } from "./callers.js";
export type { Config } from "./config-types.js";
export { type Command, loadConfig, parseCommand } from "./parse.js";
export {
  DEFAULT_EXTRACTION_MODEL,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_SANDBOX_PORT,
  DEFAULT_WAIT_SECONDS,
} from "./settings.js";
export { usage } from "./usage.js";
export { ConfigError } from "./values.js";

/**
 * Configuration: what cli.ts and the server need from `src/config/`. The settings themselves
 * (variable, flag, reader, default, help) are listed once, in `src/config/settings.ts`.
 */
export { type Command, loadConfig, parseCommand } from "./config/parse.js";
export {
  type Config,
  DEFAULT_EXTRACTION_MODEL,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_SANDBOX_PORT,
  DEFAULT_WAIT_SECONDS,
} from "./config/settings.js";
export { usage } from "./config/usage.js";
export { ConfigError } from "./config/values.js";

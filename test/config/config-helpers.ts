/** What the configuration tests share (config.test.ts, command.test.ts): a key, a base setup, a refusal. */
import { expect } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.js";

export const KEY = `lgk_${"0123456789abcdef".repeat(4)}`;
export const BASE = { GENERATION_BASE_URL: "https://api.example.com/", GENERATION_API_KEY: KEY };

/** The ConfigError `loadConfig` throws for `argv` and `env`; fails the test when it does not throw. */
export function refusal(argv: string[], env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(argv, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

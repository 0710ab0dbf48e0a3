/** Kept for tests written before test/helpers/: everything lives in test/helpers/cli.ts. */
export * from "../helpers/cli.js";

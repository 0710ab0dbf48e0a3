/**
 * Rewrites the README's "Command line" and "Configuration" tables from the list of settings
 * (src/config/settings.ts). test/config/readme.test.ts fails when the committed README differs.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { withGeneratedTables } from "../src/config/usage.js";

const path = new URL("../README.md", import.meta.url);
const before = readFileSync(path, "utf8");
const after = withGeneratedTables(before);
if (after === before) {
  process.stdout.write("README.md: configuration tables already current\n");
} else {
  writeFileSync(path, after);
  process.stdout.write("README.md: configuration tables rewritten\n");
}

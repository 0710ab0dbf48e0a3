/** Temporary directories for tests and benchmarks: real paths (symlinks resolved), removed by `cleanup`. */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TempDir {
  /** The directory, with links resolved (on macOS /tmp is a link), so paths compare equal. */
  dir: string;
  cleanup(): void;
}

export function tempDir(prefix = "generation-mcp-test-"): TempDir {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The store drivers this package does not install: pg for postgres://, @redis/client for redis://,
 * optional peer dependencies installed beside generation-mcp by whoever uses them.
 */
import { LedgerError } from "../ledger-errors.js";

/** `load()` (an import of the package `name`), or a refusal saying what to install for `scheme`. */
export async function optionalPeer<T>(load: () => Promise<T>, name: string, scheme: string): Promise<T> {
  try {
    return await load();
  } catch (cause) {
    throw new LedgerError(
      "LEDGER_CONFIG",
      `store URI: ${scheme}:// needs the ${name} package, which is not installed (npm install ${name} beside generation-mcp)`,
      { cause },
    );
  }
}

import { join } from "node:path";
import { errorFromResponse } from "../../src/client/service-errors.js";
import { type Ledger, openLedger } from "../../src/ledger/open-ledger.js";
import { tempDir as makeTempDir } from "../helpers/temp.js";

export const API_KEY = `lgk_${"c0ffee42".repeat(8)}`;
export const OTHER_KEY = `lgk_${"0badcafe".repeat(8)}`;
export const BODY = '{"model":"img-1","prompt":"a lighthouse at dusk"}';

/** Waits short enough to keep tests fast; the rules are the same as in production. */
export const FAST = { baseMs: 1, capMs: 4, referencesBaseMs: 2, retryAfterCapMs: 10 };

/**
 * The store the shared ledger suites (ledger.test.ts, reuse.test.ts) run on: sqlite unless
 * LEDGER_TEST_STORE names postgres or redis (see stores.ts), which is how CI runs them on all three.
 */
const storeEnv = process.env.LEDGER_TEST_STORE;
export const STORE: "sqlite" | "postgres" | "redis" =
  storeEnv === "postgres" || storeEnv === "redis" ? storeEnv : "sqlite";

export function tempDir(): { dir: string; path: string; uri: string; cleanup: () => void } {
  const { dir, cleanup } = makeTempDir("ledger-test-");
  const path = join(dir, "ledger.sqlite");
  return { dir, path, uri: `sqlite://${path}`, cleanup };
}

/** A ledger URI for `path`. */
export const uriFor = (path: string): string => `sqlite://${path}`;

/** The URI with one more query parameter (`name=value`). */
export const withParam = (uri: string, param: string): string =>
  `${uri}${uri.includes("?") ? "&" : "?"}${param}`;

export async function fastLedger(uri: string, extra: Parameters<typeof openLedger>[0] = {}): Promise<Ledger> {
  return openLedger({ storeUri: uri, backoff: FAST, ...extra });
}

export function serviceError(status: number, code: string, retryAfterMs?: number) {
  return errorFromResponse({
    status,
    code,
    message: `${code} from the test`,
    requestKind: "submission",
    retryAfterMs,
  });
}

export interface Sent {
  identity: string;
  bytes: string;
}

/** A fake `send`: answers from a script (an Error is thrown), records every call. */
export function scriptedSend(script: Array<Error | { taskId: string }>) {
  const calls: Sent[] = [];
  const send = async (identity: string, bytes: string) => {
    calls.push({ identity, bytes });
    const next = script.length > 1 ? script.shift() : script[0];
    if (next === undefined) throw new Error("script exhausted");
    if (next instanceof Error) throw next;
    return next;
  };
  return { calls, send, ref: (r: { taskId: string }) => ({ taskId: r.taskId }) };
}

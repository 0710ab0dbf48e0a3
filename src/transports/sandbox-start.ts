/**
 * The embedded sandbox of --sandbox. Its loopback listener is bound at start, so the signed output
 * URLs it hands out are real ones people and other programs can open, and their origin is known
 * from the start: the viewer's CSP (src/surface/viewer.ts) names it in resources/list and in every
 * read, for hosts that allow the view no other image source (the MCP Inspector). The sandbox itself
 * (its media encoders are a good part of a cold start) loads on the listener's first request.
 */
import type { Sandbox } from "../sandbox/sandbox.js";
import { listenHttp } from "../sandbox/sandbox-http.js";
import { SANDBOX_API_KEY } from "../sandbox/sandbox-key.js";
import { lazy } from "../shared/lazy.js";

/** The sandbox's public key, known without loading the sandbox. */
export const EMBEDDED_SANDBOX_KEY = SANDBOX_API_KEY;

export interface EmbeddedSandbox {
  /** Its base URL on loopback, listening already. */
  readonly url: string;
  /** Loads the sandbox now rather than on the first request. */
  load(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `journal`: where the sandbox keeps what it was asked (beside a SQLite ledger), so its tasks outlive
 * a restart of this server; `note`: how a journal it cannot keep is said (stderr).
 */
export async function embeddedSandbox(
  o: { journal?: string; note?: (line: string) => void } = {},
): Promise<EmbeddedSandbox> {
  let made = false;
  const load: () => Promise<Sandbox> = lazy(() =>
    import("../sandbox/sandbox.js").then(({ createSandbox }) => {
      made = true;
      return createSandbox({
        timeScale: 1,
        ...(o.journal === undefined ? {} : { journal: o.journal }),
        ...(o.note === undefined ? {} : { onJournal: o.note }),
      });
    }),
  );
  const listener = await listenHttp(async (request) => (await load()).serve(request), {
    host: "127.0.0.1",
    port: 0,
  });
  return {
    url: listener.url,
    async load() {
      await load();
    },
    async close() {
      await listener.close();
      // Made only if something asked for it: closing never loads it.
      const sandbox = made ? await load().catch(() => undefined) : undefined;
      await sandbox?.close();
    },
  };
}

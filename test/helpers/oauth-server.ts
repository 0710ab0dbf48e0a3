/**
 * The built CLI in `--auth oauth --sandbox` on a loopback port, its public URL that very port, with
 * what its tests use around it: Debian's Chromium for the sign-in page, the SQLite token store it
 * writes, and an https host of Client ID Metadata Documents (self-signed certificate made by
 * openssl, trusted by the CLI through NODE_EXTRA_CA_CERTS).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { openStore } from "../../src/ledger/open-ledger.js";
import type { LedgerStore } from "../../src/ledger/store.js";
import { freePort } from "../ledger/stores.js";
import { launchChromium } from "./chromium.js";
import { type Started, startHttpCli } from "./cli.js";
import { selfSignedCert, type Tls } from "./oauth-flow.js";

export type DocumentHost = Awaited<ReturnType<typeof startDocumentHost>>;

export interface OAuthServer {
  cli: Started;
  /** `http://127.0.0.1:<port>`, the public URL and issuer. */
  issuer: string;
  mcpUrl: string;
  browser: Browser;
  store: LedgerStore;
  documents: DocumentHost;
  /** Every byte of the SQLite store and its write-ahead log. */
  storeBytes(): string;
  stop(): Promise<void>;
}

/**
 * Starts it all in `iso`'s directory; `secret` seeds GENERATION_AUTH_SECRET (each file its own), `env`
 * adds settings.
 */
export async function startOAuthServer(
  iso: { env: Record<string, string>; dir: string },
  secret: number,
  env: Record<string, string> = {},
): Promise<OAuthServer> {
  const tls = selfSignedCert(iso.dir);
  const documents = await startDocumentHost(tls);
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const cli = await startHttpCli(["--sandbox", "--auth", "oauth", "--port", String(port)], {
    ...iso.env,
    GENERATION_PUBLIC_URL: issuer,
    GENERATION_AUTH_SECRET: Buffer.alloc(32, secret).toString("base64"),
    NODE_EXTRA_CA_CERTS: tls.certPath,
    ...env,
  });
  const browser = await launchChromium();
  const db = String(iso.env.GENERATION_STORE);
  const store = await openStore(db);
  const file = db.replace("sqlite://", "");
  return {
    cli,
    issuer,
    mcpUrl: `${issuer}/mcp`,
    browser,
    store,
    documents,
    storeBytes: () =>
      [file, `${file}-wal`]
        .map((f) => {
          try {
            return readFileSync(f).toString("latin1");
          } catch {
            return "";
          }
        })
        .join(""),
    async stop() {
      await browser.close();
      await cli.stop();
      await store.close();
      await documents.close();
    },
  };
}

/** An https server on loopback serving JSON documents by path, counting fetches of each. */
export async function startDocumentHost(tls: Tls): Promise<{
  url(path: string): string;
  serve(
    path: string,
    doc: (url: string) => Record<string, unknown>,
    headers?: Record<string, string>,
  ): string;
  fetches(path: string): number;
  close(): Promise<void>;
}> {
  const docs = new Map<
    string,
    { doc: (url: string) => Record<string, unknown>; headers: Record<string, string> }
  >();
  const counts = new Map<string, number>();
  let origin = "";
  const server = createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const path = req.url ?? "/";
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const entry = docs.get(path);
    if (entry === undefined) return void res.writeHead(404).end();
    res
      .writeHead(200, { "content-type": "application/json", ...entry.headers })
      .end(JSON.stringify(entry.doc(`${origin}${path}`)));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `https://localhost:${(server.address() as AddressInfo).port}`;
  return {
    url: (path) => `${origin}${path}`,
    serve(path, doc, headers = {}) {
      docs.set(path, { doc, headers });
      return `${origin}${path}`;
    },
    fetches: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The SQLite token store as the CLI writes it: rows and bytes under `oauth:<prefix>`, one row's expiry. */
export function tokenStore(store: LedgerStore) {
  const q = (
    store as unknown as { query(sql: string, ...p: unknown[]): Promise<Array<Record<string, unknown>>> }
  ).query;
  /** One field of the stored row of `model` named by `id` (its key is the hash of `id`). */
  const _field = async (model: string, id: string, name: "kv" | "exp") => {
    const key = `ledger:kv:oauth:${model}:${createHash("sha256").update(id).digest("base64url")}`;
    const out = await q.call(
      store,
      `SELECT json_extract(value, '$.${name}') AS f FROM ledger WHERE key = ?`,
      key,
    );
    return out[0]?.f;
  };
  return {
    async size(prefix: string): Promise<{ rows: number; bytes: number }> {
      const out = await q.call(
        store,
        "SELECT count(*) AS n, coalesce(sum(length(value)), 0) AS b FROM ledger WHERE key LIKE ?",
        `ledger:kv:oauth:${prefix}%`,
      );
      return { rows: Number(out[0]?.n ?? 0), bytes: Number(out[0]?.b ?? 0) };
    },
    /** The payload stored for the record of `model` named by `id`, or undefined. */
    async payload(model: string, id: string): Promise<Record<string, unknown> | undefined> {
      const key = `ledger:kv:oauth:${model}:${createHash("sha256").update(id).digest("base64url")}`;
      const out = await q.call(
        store,
        "SELECT json_extract(value, '$.kv') AS v FROM ledger WHERE key = ?",
        key,
      );
      const v = out[0]?.v;
      return typeof v === "string" ? (JSON.parse(v) as { p: Record<string, unknown> }).p : undefined;
    },
    /** When the record of `model` named by `id` expires (ms), or undefined when there is none. */
    async expiry(model: string, id: string): Promise<number | undefined> {
      const key = `ledger:kv:oauth:${model}:${createHash("sha256").update(id).digest("base64url")}`;
      const out = await q.call(
        store,
        "SELECT json_extract(value, '$.exp') AS x FROM ledger WHERE key = ?",
        key,
      );
      const x = out[0]?.x;
      return x === undefined || x === null ? undefined : Number(x);
    },
  };
}

/**
 * `--auth oauth`: the MCP authorization spec on the HTTP transport. This server is both the
 * protected resource (`<public URL>/mcp`, its metadata per RFC 9728, bearer checks with the SDK's
 * resource-server helpers) and the authorization server (provider.ts, issuer = the public URL).
 * A token resolves to the account of the key it was granted over (accounts.ts), so every ledger
 * record, session and per-key cap is bound to that key's hash, exactly as with a Bearer key.
 * http.ts calls `serve` for the OAuth routes and `authenticate` for /mcp.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { BlockList } from "node:net";
import {
  type AuthInfo,
  bearerAuthChallengeResponse,
  buildOAuthProtectedResourceMetadata,
  OAuthError,
  OAuthErrorCode,
  type OAuthTokenVerifier,
  verifyBearerToken,
} from "@modelcontextprotocol/server";
import type Provider from "oidc-provider";
import type { KeyedStore } from "../../ledger/open-ledger.js";
import { Accounts } from "./oauth-accounts.js";
import { StoreAdapter } from "./oauth-adapter.js";
import { accountTag, type OAuthLog, oauthLog } from "./oauth-log.js";
import { createProvider, type Lifetimes, MCP_SCOPE, SIGN_IN_PATH } from "./oauth-provider.js";
import { Sealing } from "./oauth-sealing.js";
import { RegistrationLimit } from "./register-limit.js";
import { type KeyCheck, serveSignIn } from "./sign-in.js";

export type { KeyCheck } from "./sign-in.js";

export interface OAuthOptions {
  /** The origin users reach (GENERATION_PUBLIC_URL). */
  publicUrl: string;
  /** GENERATION_AUTH_SECRET(S), base64. */
  secrets: readonly string[];
  kv: KeyedStore;
  hashKey(apiKey: string): string;
  /** Asks the service whether a key works (GET /api/generate/models). */
  checkKey(apiKey: string): Promise<KeyCheck>;
  /** Whether this process already serves the key behind a hash. */
  hasKey(keyHash: string): boolean;
  /** Makes this process serve a key (its engine), opened from the account. */
  useKey(apiKey: string): void;
  sandboxKey?: string;
  lifetimes: Lifetimes;
  /** The proxies whose X-Forwarded-For is believed (GENERATION_TRUSTED_PROXIES), as a BlockList. */
  trustedProxies?: BlockList;
  /** Where the operator's log lines go (stderr). */
  write(line: string): void;
}

export interface OAuthGate {
  /** The protected resource, `<public URL>/mcp`. */
  readonly resource: string;
  /** The public URL's host name, which Host headers may carry. */
  readonly hostname: string;
  /** Serves an OAuth route (metadata, authorization server, sign-in); false when `path` is none. */
  serve(req: IncomingMessage, res: ServerResponse, path: string): boolean;
  /** The key hash a request's access token resolves to, or the 401/403 answer. */
  authenticate(req: IncomingMessage): Promise<AuthInfo | Response>;
  /** The service refused this key: end every grant over it. */
  revokeKey(keyHash: string): Promise<void>;
}

const PRM = "/.well-known/oauth-protected-resource";
const SWEEP_MS = 60 * 60 * 1000;
const AS_METADATA = new Set(["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]);

export async function createOAuth(o: OAuthOptions): Promise<OAuthGate> {
  const issuer = new URL(o.publicUrl).origin;
  const resource = `${issuer}/mcp`;
  const sealing = new Sealing(o.secrets);
  const accounts = new Accounts(o.kv, sealing, o.lifetimes.grantIdle * 1000);
  const loopbackHttp = issuer.startsWith("http:");
  const log = oauthLog(o.write);
  const provider = await createProvider({
    issuer,
    resource,
    kv: o.kv,
    sealing,
    accounts,
    lifetimes: o.lifetimes,
    log,
    allowLoopbackClients: loopbackHttp,
  });
  const registrations = new RegistrationLimit(o.trustedProxies);
  // A registration a sign-in used lives as long as the grants over it (see keepAlive).
  const registered = new StoreAdapter("Client", o.kv);
  const callback = provider.callback();
  // SQL stores keep expired tokens until swept (Redis expires them itself).
  setInterval(() => void o.kv.sweep(Date.now()).catch(() => undefined), SWEEP_MS).unref();
  const resourceMetadataUrl = `${issuer}${PRM}/mcp`;
  const metadata = JSON.stringify(
    buildOAuthProtectedResourceMetadata({
      // Only `issuer` is used: the document points clients at the authorization server.
      oauthMetadata: {
        issuer,
        authorization_endpoint: `${issuer}/oauth/authorize`,
        token_endpoint: `${issuer}/oauth/token`,
        response_types_supported: ["code"],
      },
      resourceServerUrl: new URL(resource),
      scopesSupported: [MCP_SCOPE],
      resourceName: "generation-mcp",
      dangerouslyAllowInsecureIssuerUrl: loopbackHttp,
    }),
  );
  const bearer = {
    verifier: verifier(provider, accounts, o, keepAlive(o.kv, accounts, o.lifetimes.grantIdle)),
    expectedResource: new URL(resource),
    requiredScopes: [MCP_SCOPE],
    resourceMetadataUrl,
  };
  const forwarded = { proto: issuer.slice(0, issuer.indexOf(":")), host: new URL(issuer).host };
  const signIn = {
    provider,
    sealing,
    accounts,
    resource,
    hashKey: o.hashKey,
    checkKey: o.checkKey,
    log,
    async granted(clientId: string, keyHash: string) {
      log.signedIn(clientId, keyHash);
      await registered.touch(clientId, o.lifetimes.grantIdle);
    },
    ...(o.sandboxKey === undefined ? {} : { sandboxKey: o.sandboxKey }),
  };

  return {
    resource,
    hostname: new URL(issuer).hostname,
    serve(req, res, path) {
      if (path === PRM || path === `${PRM}/mcp`) {
        servePrm(req, res, metadata);
        return true;
      }
      const asMetadata = AS_METADATA.has(path);
      if (!asMetadata && !path.startsWith("/oauth/")) return false;
      // The URLs oidc-provider writes come from these, set from the public URL, never the client.
      req.headers["x-forwarded-proto"] = forwarded.proto;
      req.headers["x-forwarded-host"] = forwarded.host;
      if (path.startsWith(SIGN_IN_PATH)) {
        serveSignIn(req, res, path.slice(SIGN_IN_PATH.length), signIn).catch(() => {
          if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" }).end("Sign-in failed");
        });
        return true;
      }
      if (path === "/oauth/register" && req.method === "POST" && !admitted(req, res, registrations, log)) {
        return true;
      }
      if (asMetadata) req.url = `/.well-known/openid-configuration${(req.url ?? "").slice(path.length)}`;
      void callback(req, res);
      return true;
    },
    async authenticate(req) {
      try {
        return await verifyBearerToken(req.headers.authorization, bearer);
      } catch (error) {
        return bearerAuthChallengeResponse(error, bearer);
      }
    },
    async revokeKey(keyHash) {
      const ended = await accounts.revoke(keyHash);
      log.revoked(
        `${ended} sign-in(s) of account ${accountTag(keyHash)}`,
        "the service refused its key (INVALID_API_KEY: revoked or expired)",
      );
    },
  };
}

/** Counts a registration against its source's rate; answers 429 (RFC 6585) when it is over. */
function admitted(
  req: IncomingMessage,
  res: ServerResponse,
  limit: RegistrationLimit,
  log: OAuthLog,
): boolean {
  const admission = limit.admit(req);
  if (admission.ok) return true;
  log.rateLimited(admission.source, admission.limit);
  res
    .writeHead(429, {
      "content-type": "application/json",
      "cache-control": "no-store",
      "retry-after": String(admission.retryAfterS),
    })
    .end(
      JSON.stringify({
        error: "too_many_requests",
        error_description: `Too many client registrations: ${admission.limit}. Retry after ${admission.retryAfterS} s, or register by Client ID Metadata Document.`,
      }),
    );
  return false;
}

/**
 * A grant in use lives on: each request checked against it extends it (and its account and
 * registered client) to the idle lifetime again, at most once per tenth of that lifetime (and at
 * least once a day), so a sign-in ends only after it has gone unused that long.
 */
function keepAlive(kv: KeyedStore, accounts: Accounts, idleS: number) {
  const grants = new StoreAdapter("Grant", kv);
  const clients = new StoreAdapter("Client", kv);
  const everyS = Math.min(24 * 60 * 60, idleS / 10);
  return async (grantId: string, exp: number | undefined, clientId: string, keyHash: string) => {
    if (exp !== undefined && exp - Date.now() / 1000 > idleS - everyS) return;
    await Promise.all([
      grants.touch(grantId, idleS),
      clients.touch(clientId, idleS),
      accounts.touch(keyHash),
    ]);
  };
}

/** RFC 9728 metadata: public, readable from any origin (browser-based hosts discover it too). */
function servePrm(req: IncomingMessage, res: ServerResponse, metadata: string): void {
  const cors = { "access-control-allow-origin": "*" };
  if (req.method === "OPTIONS") {
    res
      .writeHead(204, { ...cors, "access-control-allow-methods": "GET", "access-control-allow-headers": "*" })
      .end();
  } else if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { ...cors, allow: "GET, HEAD, OPTIONS" }).end();
  } else {
    res
      .writeHead(200, { ...cors, "content-type": "application/json", "cache-control": "public, max-age=300" })
      .end(req.method === "HEAD" ? undefined : metadata);
  }
}

/**
 * An access token is valid while its record (stored by hash) and its grant both live: revoking,
 * reusing a refresh token or the service refusing the key deletes the grant (adapter.ts).
 */
function verifier(
  provider: Provider,
  accounts: Accounts,
  o: OAuthOptions,
  touch: ReturnType<typeof keepAlive>,
): OAuthTokenVerifier {
  const invalid = (why: string) =>
    new OAuthError(OAuthErrorCode.InvalidToken, `${why}; sign in again through your app`);
  return {
    async verifyAccessToken(token) {
      const at = await provider.AccessToken.find(token);
      if (at === undefined || typeof at.grantId !== "string") {
        throw invalid("The access token is unknown, expired or revoked");
      }
      const grant = await provider.Grant.find(at.grantId);
      if (grant === undefined) throw invalid("The sign-in behind this access token was revoked");
      const keyHash = at.accountId;
      if (typeof keyHash !== "string") throw invalid("The access token names no account");
      await touch(at.grantId, grant.exp, at.clientId ?? "", keyHash).catch(() => undefined);
      if (!o.hasKey(keyHash)) {
        const apiKey = await accounts.apiKey(keyHash);
        if (apiKey === undefined) throw invalid("The key behind this sign-in is no longer stored");
        o.useKey(apiKey);
      }
      const aud = Array.isArray(at.aud) ? at.aud[0] : at.aud;
      return {
        token: "",
        clientId: at.clientId ?? "",
        scopes: (at.scope ?? "").split(" ").filter((s) => s !== ""),
        ...(at.exp === undefined ? {} : { expiresAt: at.exp }),
        ...(typeof aud === "string" ? { resource: new URL(aud) } : {}),
        extra: { keyHash },
      };
    },
  };
}

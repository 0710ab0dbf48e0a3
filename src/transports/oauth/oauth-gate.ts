/**
 * `--auth oauth`: the MCP authorization spec on the HTTP transport. This server is both the
 * protected resource (`<public URL>/mcp`, its metadata per RFC 9728, bearer checks with the SDK's
 * resource-server helpers) and the authorization server (oauth-provider.ts, issuer = the public URL).
 * A token resolves to the account of the key it was granted over (oauth-accounts.ts), and `authenticate`
 * gives the request that key's engine (the one kept for it, or one made from the stored key), so
 * every ledger record, session and per-key cap is bound to that key's hash, exactly as with a
 * Bearer key. http-server.ts calls `serve` for the OAuth routes and `authenticate` for /mcp.
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
import type { Engine } from "../../mcp/context.js";
import type { KeyCheck } from "../engine.js";
import { CimdFetches } from "./cimd-guard.js";
import type { Accounts } from "./oauth-accounts.js";
import { StoreAdapter } from "./oauth-adapter.js";
import type { OAuthLog } from "./oauth-log.js";
import { createProvider, type Lifetimes, MCP_SCOPE, SIGN_IN_PATH } from "./oauth-provider.js";
import { routeAndCount } from "./oauth-routes.js";
import type { Sealing } from "./oauth-sealing.js";
import { hooksOnlyWhileServing } from "./provider-hooks.js";
import { admitSignIn, clientAddress, oauthLimits, type SignInRates, sourceOf } from "./rate-limit.js";
import { serveSignIn } from "./sign-in.js";
import { TokenChecks } from "./token-checks.js";

/** The engines a checked token or a signed-in key resolves to (engine.ts's Engines). */
export interface KeyEngines {
  forKey(apiKey: string): Engine;
  kept(keyHash: string): Engine | undefined;
}

export interface OAuthOptions {
  /** The origin users reach (GENERATION_PUBLIC_URL). */
  publicUrl: string;
  /** What GENERATION_AUTH_SECRET(S) protect. */
  sealing: Sealing;
  kv: KeyedStore;
  /** The signed-in keys, sealed, and the grants over each (over `kv`). */
  accounts: Accounts;
  hashKey(apiKey: string): string;
  /** Asks the service whether a key works (GET /api/generate/models). */
  checkKey(apiKey: string): Promise<KeyCheck>;
  engines: KeyEngines;
  sandboxKey?: string;
  lifetimes: Lifetimes;
  /** The proxies whose X-Forwarded-For is believed (GENERATION_TRUSTED_PROXIES), as a BlockList. */
  trustedProxies?: BlockList;
  /** The operator's log lines (oauth-log.ts, on stderr). */
  log: OAuthLog;
  /** The deployment's sign-in figures, where the operator set them (rate-limit.ts). */
  signInRates?: SignInRates;
  /** Tokens checked lately (token-checks.ts), told of revocations on this replica; one is made if none. */
  tokenChecks?: TokenChecks<FoundToken>;
}

export interface OAuthGate {
  /** The protected resource, `<public URL>/mcp`. */
  readonly resource: string;
  /** The public URL's host name, which Host headers may carry. */
  readonly hostname: string;
  /** Serves an OAuth route (metadata, authorization server, sign-in); false when `path` is none. */
  serve(req: IncomingMessage, res: ServerResponse, path: string): boolean;
  /** Checks a request's access token: the engine of the key behind it, or the 401/403 answer. */
  authenticate(req: IncomingMessage): Promise<Engine | Response>;
}

const PRM = "/.well-known/oauth-protected-resource";
const SWEEP_MS = 60 * 60 * 1000;
const AS_METADATA = new Set(["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]);

export async function createOAuth(o: OAuthOptions): Promise<OAuthGate> {
  const issuer = new URL(o.publicUrl).origin;
  const resource = `${issuer}/mcp`;
  const { sealing, accounts, log } = o;
  const loopbackHttp = issuer.startsWith("http:");
  // Counted in the ledger's store, so every replica on it shares each limit (rate-limit.ts).
  const limits = oauthLimits(o.kv, o.trustedProxies, log, o.signInRates);
  const source = (req: IncomingMessage) => sourceOf(clientAddress(req, o.trustedProxies));
  const provider = await createProvider({
    issuer,
    resource,
    kv: o.kv,
    sealing,
    accounts,
    lifetimes: o.lifetimes,
    log,
    fetches: new CimdFetches(loopbackHttp, limits),
    sourceOf: source,
  });
  routeAndCount(provider, limits);
  // A registration a sign-in used lives as long as the grants over it (see keepAlive).
  const registered = new StoreAdapter("Client", o.kv);
  // On Node 22 its AsyncLocalStorage's promise hooks run only while it serves (provider-hooks.ts).
  const callback = hooksOnlyWhileServing(provider.callback());
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
  // Each request's check extends the grant it uses (see keepAlive).
  const touch = keepAlive(o.kv, accounts, o.lifetimes.grantIdle);
  const checked = o.tokenChecks ?? new TokenChecks<FoundToken>();
  const check = (token: string) => findToken(provider, token, touch);
  const bearer = {
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
    sourceOf: source,
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
        admitSignIn(limits, req, res)
          .then(async (admitted) => {
            if (admitted) await serveSignIn(req, res, path.slice(SIGN_IN_PATH.length), signIn);
          })
          .catch(() => {
            if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" }).end("Sign-in failed");
          });
        return true;
      }
      // Everything else under /oauth/ is the provider's: counted and refused as it routes it (oauth-routes.ts).
      if (asMetadata) req.url = `/.well-known/openid-configuration${(req.url ?? "").slice(path.length)}`;
      void callback(req, res);
      return true;
    },
    async authenticate(req) {
      // The token as found in the store, for the SDK's checks and then for its account.
      let found: FoundToken | undefined;
      const verifier: OAuthTokenVerifier = {
        async verifyAccessToken(token) {
          // Checked against the store at most TOKEN_RECHECK_MS ago (the revocation bound, docs/oauth.md).
          found = await checked.find(token, check);
          return found.auth;
        },
      };
      try {
        // The SDK's checks (header, resource, scope, expiry) over the token found in the store.
        await verifyBearerToken(req.headers.authorization, { ...bearer, verifier });
        if (found === undefined) throw invalid("The access token was not checked");
        // The engine kept for the key, or one made from the key sealed in its account.
        return o.engines.kept(found.keyHash) ?? o.engines.forKey(await storedKey(accounts, found.keyHash));
      } catch (error) {
        // A store that failed is not a bad token: the server answers 503, retry shortly.
        if (!(error instanceof OAuthError)) throw error;
        return bearerAuthChallengeResponse(error, bearer);
      }
    },
  };
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

const invalid = (why: string) =>
  new OAuthError(OAuthErrorCode.InvalidToken, `${why}; sign in again through your app`);

/** The key behind an account, opened from the store when no engine is kept for it. */
async function storedKey(accounts: Accounts, keyHash: string): Promise<string> {
  const apiKey = await accounts.apiKey(keyHash);
  if (apiKey === undefined) throw invalid("The key behind this sign-in is no longer stored");
  return apiKey;
}

/** A live access token: what the SDK checks of it, and the account (key hash) it was granted over. */
export interface FoundToken {
  auth: AuthInfo;
  keyHash: string;
}

/**
 * An access token is valid while its record (stored by hash) and its grant both live: revoking,
 * reusing a refresh token or the service refusing the key deletes the grant (oauth-adapter.ts).
 */
async function findToken(
  provider: Provider,
  token: string,
  touch: ReturnType<typeof keepAlive>,
): Promise<FoundToken> {
  const at = await provider.AccessToken.find(token);
  if (at === undefined || typeof at.grantId !== "string") {
    throw invalid("The access token is unknown, expired or revoked");
  }
  const grant = await provider.Grant.find(at.grantId);
  if (grant === undefined) throw invalid("The sign-in behind this access token was revoked");
  if (typeof at.accountId !== "string") throw invalid("The access token names no account");
  await touch(at.grantId, grant.exp, at.clientId ?? "", at.accountId).catch(() => undefined);
  const aud = Array.isArray(at.aud) ? at.aud[0] : at.aud;
  const auth: AuthInfo = {
    token: "",
    clientId: at.clientId ?? "",
    scopes: (at.scope ?? "").split(" ").filter((s) => s !== ""),
    ...(at.exp === undefined ? {} : { expiresAt: at.exp }),
    ...(typeof aud === "string" ? { resource: new URL(aud) } : {}),
  };
  return { auth, keyHash: at.accountId };
}

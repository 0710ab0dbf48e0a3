/**
 * The built-in authorization server: panva's oidc-provider (OpenID-certified), configured for the
 * MCP authorization spec and nothing more: authorization code with PKCE S256 only, Client ID
 * Metadata Documents (cimd-guard.ts) and dynamic client registration under one policy
 * (client-policy.ts), opaque access tokens bound to this one resource (RFC 8707), refresh tokens
 * rotated on every use with a short grace for a raced or retried refresh (oauth-adapter.ts),
 * revocation (RFC 7009). Off, because nothing here would enforce or use them: DPoP (the resource
 * server checks no proofs), ID tokens (no `openid`: no identifier of the user leaves the server),
 * logout, pushed requests, form_post. Its storage is the ledger's store; the sign-in interaction
 * is ours (sign-in.ts); what it serves passes through oauth-guards.ts. docs/oauth.md explains it.
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import Provider, { type Configuration, errors, type JWK, type KoaContextWithOIDC } from "oidc-provider";
import type { KeyedStore } from "../../ledger/open-ledger.js";
import type { CimdFetches } from "./cimd-guard.js";
import { applyClientPolicy } from "./client-policy.js";
import type { Accounts } from "./oauth-accounts.js";
import { type AdapterOptions, StoreAdapter } from "./oauth-adapter.js";
import { guardProvider } from "./oauth-guards.js";
import type { OAuthLog } from "./oauth-log.js";
import type { Sealing } from "./oauth-sealing.js";
import { errorPage, pageHeaders } from "./sign-in-page.js";

/** The one scope this server knows: use of the MCP endpoint under the signed-in key. */
export const MCP_SCOPE = "mcp";
export const SIGN_IN_PATH = "/oauth/sign-in/";
/** The scopes a request may carry that mean anything here; `mcp` is always granted. */
const KNOWN_SCOPES = new Set(["offline_access", MCP_SCOPE]);

/** Lifetimes in seconds (src/config/oauth-settings.ts). */
export interface Lifetimes {
  accessToken: number;
  refreshToken: number;
  /** A grant unused this long ends (each use extends it: oauth-gate.ts). */
  grantIdle: number;
  refreshGrace: number;
}

export interface ProviderOptions {
  issuer: string;
  resource: string;
  kv: KeyedStore;
  sealing: Sealing;
  accounts: Accounts;
  lifetimes: Lifetimes;
  log: OAuthLog;
  /** CIMD fetches: their guard, limits and failures (cimd-guard.ts). */
  fetches: CimdFetches;
  /** The client's address, as the rate limits count it (rate-limit.ts), for the log. */
  sourceOf(req: import("node:http").IncomingMessage): string;
}

/** Where each endpoint is served; the ones turned off (logout, userinfo, PAR) answer nothing. */
const ROUTES: Configuration["routes"] = {
  authorization: "/oauth/authorize",
  token: "/oauth/token",
  registration: "/oauth/register",
  revocation: "/oauth/revoke",
  jwks: "/oauth/jwks",
  end_session: "/oauth/logout",
  userinfo: "/oauth/userinfo",
  introspection: "/oauth/introspect",
  pushed_authorization_request: "/oauth/par",
};

export async function createProvider(o: ProviderOptions): Promise<Provider> {
  const { lifetimes: t } = o;
  const adapterOptions: AdapterOptions = {
    refreshGraceMs: t.refreshGrace * 1000,
    onReuse: (model, grantId) => reuseRevoked(o.log, model, grantId),
  };
  const configuration: Configuration = {
    adapter: (name: string) => new StoreAdapter(name, o.kv, adapterOptions),
    jwks: { keys: [await signingKey(o.kv, o.sealing)] },
    cookies: {
      keys: o.sealing.cookieKeys,
      names: { session: "gm_session", interaction: "gm_interaction", resume: "gm_resume" },
      long: { httpOnly: true, sameSite: "lax", signed: true },
      short: { httpOnly: true, sameSite: "lax", signed: true },
    },
    routes: ROUTES,
    // `openid` is oidc-provider's own and always listed by it; oauth-guards.ts drops it from the metadata.
    scopes: ["offline_access", MCP_SCOPE],
    claims: { openid: ["sub"] },
    responseTypes: ["code"],
    pkce: { required: () => true },
    // No client_secret_jwt or private_key_jwt: secrets are stored hashed, and no key is fetched.
    clientAuthMethods: ["none", "client_secret_basic", "client_secret_post"],
    clientDefaults: {
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      id_token_signed_response_alg: "ES256",
    },
    extraClientMetadata: {
      // Listed so the policy runs on every client; client_name is standard and kept as it is.
      properties: ["client_name"],
      validator: (_ctx, _key, _value, metadata) => applyClientPolicy(metadata as Record<string, unknown>),
    },
    // A request asks for what it likes; what it gets is `mcp` (and `offline_access` if asked): a
    // client sending no scope, or only offline_access, is granted the server's scope.
    extraParams: {
      scope: (ctx: KoaContextWithOIDC) => {
        const params = ctx.oidc.params;
        if (params === undefined) return;
        const asked = String(params.scope ?? "").split(" ");
        params.scope = [...new Set([...asked.filter((s) => KNOWN_SCOPES.has(s)), MCP_SCOPE])].join(" ");
      },
    },
    features: features(o),
    ...tokenPolicy(t),
    findAccount: async (_ctx, sub) =>
      (await o.accounts.exists(sub)) ? { accountId: sub, claims: async () => ({ sub }) } : undefined,
    interactions: { url: (_ctx, interaction) => `${SIGN_IN_PATH}${interaction.uid}` },
    renderError: async (ctx, out) => {
      for (const [name, value] of Object.entries(pageHeaders())) ctx.set(name, value);
      ctx.body = errorPage(out.error ?? "error", out.error_description ?? "The request was refused.");
    },
    // Browser-based public clients may call the token endpoints from their redirect's origin.
    clientBasedCORS: (_ctx, origin, client) =>
      origin !== "null" && client.redirectUris?.some((uri) => URL.parse(uri)?.origin === origin) === true,
    fetch: o.fetches.fetch(),
  };
  const provider = new Provider(o.issuer, configuration);
  // Requests reach it through oauth-gate.ts, which sets X-Forwarded-Proto/Host from the public URL
  // (never from the client), so the URLs it writes are the ones users reach.
  provider.proxy = true;
  guardProvider(provider, o.log, o.fetches, o.sourceOf);
  return provider;
}

/**
 * How long what it issues lives, and when a refresh token is issued and rotated: tokens live by
 * their grant, and every authorization goes through the sign-in page.
 */
function tokenPolicy(
  t: Lifetimes,
): Pick<
  Configuration,
  "ttl" | "rotateRefreshToken" | "expiresWithSession" | "issueRefreshToken" | "loadExistingGrant"
> {
  return {
    ttl: {
      AccessToken: t.accessToken,
      AuthorizationCode: 60,
      IdToken: 60,
      Interaction: 30 * 60,
      Session: 30 * 60,
      Grant: t.grantIdle,
      RefreshToken: t.refreshToken,
    },
    rotateRefreshToken: true,
    // Tokens live by their grant, not by the short browser session of the sign-in page.
    expiresWithSession: async () => false,
    // Hosts ask for the resource's scope, not offline_access: every client allowed to refresh gets a refresh token.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    // Every authorization shows the sign-in page: a browser session alone never grants a new client.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return typeof grantId === "string" ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
  };
}

/**
 * What is on: registration, revocation (a client's own tokens; an access token ends alone), CIMD
 * behind its guard, tokens bound to this one resource. What is off, because nothing here would
 * enforce or use it: DPoP, logout, pushed requests, userinfo, the development interactions.
 */
function features(o: ProviderOptions): Configuration["features"] {
  return {
    devInteractions: { enabled: false },
    dPoP: { enabled: false },
    rpInitiatedLogout: { enabled: false },
    pushedAuthorizationRequests: { enabled: false },
    registration: { enabled: true, issueRegistrationAccessToken: false },
    revocation: {
      enabled: true,
      // A client revokes only its own tokens. An access token ends alone: oidc-provider would
      // end its whole grant, so it is destroyed here and its grant left alone.
      allowedPolicy: async (_ctx, client, token) => {
        if (token.clientId !== client.clientId) return false;
        if (token.kind !== "AccessToken") return true;
        await token.destroy();
        o.log.revoked(`an access token of client ${client.clientId}`, "revoked by the client (RFC 7009)");
        return false;
      },
    },
    userinfo: { enabled: false },
    clientIdMetadataDocument: {
      enabled: true,
      ack: "draft-02",
      allowFetch: (ctx, clientId) => o.fetches.allowFetch(ctx, clientId),
      cacheDuration: { min: 60, max: 3_600 },
    },
    resourceIndicators: {
      enabled: true,
      // A request naming no resource still gets a token for this one, never an unbound one.
      defaultResource: () => o.resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => {
        if (indicator !== o.resource) {
          throw new errors.InvalidTarget(`this server issues tokens only for the resource ${o.resource}`);
        }
        return {
          scope: MCP_SCOPE,
          audience: o.resource,
          accessTokenTTL: o.lifetimes.accessToken,
          accessTokenFormat: "opaque",
        };
      },
    },
  };
}

/** A second use of a code, or of a refresh token after its grace, ended a grant: say which. */
function reuseRevoked(log: OAuthLog, model: string, _grantId: string): void {
  log.revoked(
    "a sign-in",
    model === "RefreshToken"
      ? "a refresh token was used again after its grace (reuse detection ends the whole family)"
      : "an authorization code was used twice",
  );
}

/**
 * The key that signs what oidc-provider signs (no token this server issues: access tokens are
 * opaque and no ID token is made), the same on every replica: made once, sealed, and stored with
 * put-if-absent, so the replicas that start together agree on one.
 */
async function signingKey(kv: KeyedStore, sealing: Sealing): Promise<JWK> {
  const KEY = "oauth:signing-key";
  const TTL = 10 * 365 * 24 * 60 * 60 * 1000;
  for (let i = 0; i < 3; i++) {
    const raw = await kv.get(KEY);
    const opened = raw === undefined ? undefined : sealing.open(raw, KEY);
    if (opened !== undefined && !opened.stale) return JSON.parse(opened.plain) as JWK;
    const jwk =
      opened === undefined
        ? {
            ...generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" }),
            kid: randomUUID(),
            alg: "ES256",
            use: "sig",
          }
        : (JSON.parse(opened.plain) as JWK);
    if (await kv.swap(KEY, raw, sealing.seal(JSON.stringify(jwk), KEY), TTL)) return jwk as JWK;
  }
  throw new Error("the authorization server's signing key could not be stored: the store kept changing");
}

/**
 * The built-in authorization server: panva's oidc-provider (OpenID-certified), configured for the
 * MCP authorization spec and nothing more: authorization code with PKCE S256 only, Client ID
 * Metadata Documents (cimd-guard.ts) and dynamic client registration, opaque access tokens bound
 * to this one resource (RFC 8707), refresh tokens rotated on every use with reuse revoking the
 * grant, revocation (RFC 7009). Its storage is the ledger's store (adapter.ts); the sign-in
 * interaction is ours (sign-in.ts). docs/oauth.md explains the choices.
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import Provider, { type Configuration, errors, type JWK, type KoaContextWithOIDC } from "oidc-provider";
import type { KeyedStore } from "../../ledger/open-ledger.js";
import { cimdFetch, cimdGuard } from "./cimd-guard.js";
import type { Accounts } from "./oauth-accounts.js";
import { StoreAdapter } from "./oauth-adapter.js";
import type { Sealing } from "./oauth-sealing.js";
import { errorPage, pageHeaders } from "./sign-in-page.js";

/** The one scope this server knows: use of the MCP endpoint under the signed-in key. */
export const MCP_SCOPE = "mcp";
export const ACCESS_TOKEN_TTL_S = 15 * 60;
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 60 * 60;
/** How long a sign-in lasts at most: then the user signs in again. */
export const GRANT_TTL_S = 90 * 24 * 60 * 60;
export const SIGN_IN_PATH = "/oauth/sign-in/";

export interface ProviderOptions {
  issuer: string;
  resource: string;
  kv: KeyedStore;
  sealing: Sealing;
  accounts: Accounts;
  /** Loopback testing: CIMD documents may live on loopback (never on other private addresses). */
  allowLoopbackClients: boolean;
}

export async function createProvider(o: ProviderOptions): Promise<Provider> {
  const configuration: Configuration = {
    adapter: (name: string) => new StoreAdapter(name, o.kv),
    jwks: { keys: [await signingKey(o.kv, o.sealing)] },
    cookies: {
      keys: o.sealing.cookieKeys,
      names: { session: "gm_session", interaction: "gm_interaction", resume: "gm_resume" },
      long: { httpOnly: true, sameSite: "lax", signed: true },
      short: { httpOnly: true, sameSite: "lax", signed: true },
    },
    routes: {
      authorization: "/oauth/authorize",
      token: "/oauth/token",
      registration: "/oauth/register",
      revocation: "/oauth/revoke",
      jwks: "/oauth/jwks",
      end_session: "/oauth/logout",
      userinfo: "/oauth/userinfo",
      introspection: "/oauth/introspect",
      pushed_authorization_request: "/oauth/par",
    },
    // Listed so clients may register and ask for `mcp`; tokens carry it for the resource only.
    scopes: ["openid", "offline_access", MCP_SCOPE],
    claims: { openid: ["sub"] },
    responseTypes: ["code"],
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      id_token_signed_response_alg: "ES256",
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      clientIdMetadataDocument: {
        enabled: true,
        ack: "draft-02",
        allowFetch: (_ctx, clientId) => cimdGuard(clientId, o.allowLoopbackClients),
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
            accessTokenTTL: ACCESS_TOKEN_TTL_S,
            accessTokenFormat: "opaque",
          };
        },
      },
    },
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_S,
      AuthorizationCode: 60,
      IdToken: ACCESS_TOKEN_TTL_S,
      Interaction: 30 * 60,
      Session: 30 * 60,
      Grant: GRANT_TTL_S,
      RefreshToken: REFRESH_TOKEN_TTL_S,
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
    fetch: cimdFetch(o.allowLoopbackClients),
  };
  const provider = new Provider(o.issuer, configuration);
  // Requests reach it through http.ts, which sets X-Forwarded-Proto/Host from the public URL
  // (never from the client), so the URLs it writes are the ones users reach.
  provider.proxy = true;
  return provider;
}

/**
 * The key that signs ID tokens (a host asking for `openid`), the same on every replica: made once,
 * sealed, and stored with put-if-absent, so the replicas that start together agree on one.
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

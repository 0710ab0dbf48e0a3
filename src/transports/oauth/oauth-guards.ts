/**
 * What stands around oidc-provider once it is made (oauth-provider.ts):
 * - every response it writes carries this server's security headers (no framing, no sniffing,
 *   no referrer, a CSP that runs nothing); its own error page is ours (sign-in-page.ts);
 * - `response_mode` other than `query` is refused on our page, so its stock form_post page (a
 *   script that posts the code onward) is never served;
 * - its metadata says only what is enforced: no `openid` (no ID tokens are made), no ID-token,
 *   claim or subject fields, and `query` as the one response mode;
 * - a registered client's secret is compared with the hash the store keeps (oauth-adapter.ts);
 * - its events become the operator's log lines (oauth-log.ts): registrations, revocations by
 *   reuse or by the client, and Client ID Metadata Documents that could not be used.
 */
import type { IncomingMessage } from "node:http";
import type Provider from "oidc-provider";
import type { KoaContextWithOIDC } from "oidc-provider";
import type { CimdFetches } from "./cimd-guard.js";
import { secretMatches } from "./oauth-adapter.js";
import type { OAuthLog } from "./oauth-log.js";
import { classify } from "./oauth-routes.js";
import { errorPage, pageHeaders } from "./sign-in-page.js";

/** For JSON answers and anything else that is not one of our pages: nothing may run or frame it. */
const API_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** Metadata fields that describe ID tokens, userinfo claims or subjects: none is issued here. */
const NOT_ISSUED = [
  "claims_supported",
  "claims_parameter_supported",
  "claim_types_supported",
  "subject_types_supported",
  "id_token_signing_alg_values_supported",
  "jwks_uri",
];

export function guardProvider(
  provider: Provider,
  log: OAuthLog,
  fetches: CimdFetches,
  sourceOf: (req: IncomingMessage) => string,
): void {
  // Secrets are stored as hashes; this is the comparison oidc-provider's client auth calls.
  provider.Client.prototype.compareClientSecret = function compare(actual: string) {
    return secretMatches(this.clientSecret, actual);
  };
  provider.use(async (ctx, next) => {
    ctx.set(API_HEADERS);
    const mode = ctx.query.response_mode;
    const route = classify(ctx.method, ctx.path);
    const authorize = route.served && route.path === "/oauth/authorize";
    if (authorize && mode !== undefined && mode !== "query") {
      ctx.status = 400;
      ctx.set(pageHeaders());
      ctx.body = errorPage(
        "invalid_request",
        "This server returns the authorization response only in the query (response_mode=query).",
      );
      return;
    }
    await next();
    const oidc = (ctx as Partial<KoaContextWithOIDC>).oidc;
    if (oidc?.route === "discovery" && ctx.body !== null && typeof ctx.body === "object") {
      const body = ctx.body as Record<string, unknown>;
      for (const field of NOT_ISSUED) delete body[field];
      body.scopes_supported = (body.scopes_supported as string[]).filter((s) => s !== "openid");
      body.response_modes_supported = ["query"];
    }
  });
  provider.on("registration_create.success", (ctx, client) => {
    log.registered(client.clientId, client.clientName, client.redirectUris ?? [], sourceOf(ctx.req));
  });
  provider.on("grant.revoked", (ctx: KoaContextWithOIDC) => {
    const route = ctx.oidc.route;
    const grantType = ctx.oidc.params?.grant_type;
    const client = ctx.oidc.client?.clientId ?? "unknown";
    const reason =
      route === "revocation"
        ? "its refresh token was revoked by the client (RFC 7009)"
        : grantType === "authorization_code"
          ? "an authorization code was used twice"
          : "a refresh token was used again after its grace (reuse detection ends the whole family)";
    log.revoked(`the sign-in of client ${client}`, reason);
  });
  provider.on("authorization.error", (ctx, error) => cimdFailure(ctx, error, log, fetches));
  provider.on("grant.error", (ctx, error) => cimdFailure(ctx, error, log, fetches));
}

/** A client_id that is a URL whose document could not be fetched or used: the host and why. */
function cimdFailure(ctx: KoaContextWithOIDC, error: Error, log: OAuthLog, fetches: CimdFetches): void {
  const clientId = ctx.oidc?.params?.client_id;
  if (typeof clientId !== "string" || !clientId.startsWith("https://")) return;
  const e = error as Error & { error?: string; error_description?: string; error_detail?: string };
  const about = `${e.error_description ?? ""} ${e.error_detail ?? ""}`;
  const documentProblem =
    /metadata document/.test(about) ||
    e.error === "invalid_client_metadata" ||
    e.error === "invalid_redirect_uri";
  if (!documentProblem || ctx.oidc.client !== undefined || e.error === "too_many_requests") return;
  // Not fetched again for a while: a document that fails costs one fetch, not one per request.
  if (/fetch failed|metadata document/.test(about) || e.error === "invalid_client_metadata")
    fetches.failed(clientId);
  log.cimdFailed(clientId, [e.error_description, e.error_detail].filter(Boolean).join(": "));
}

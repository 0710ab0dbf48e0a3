/**
 * What a client may be: the policy every client's metadata passes, whether it registered
 * (RFC 7591) or presented a Client ID Metadata Document. oidc-provider runs it on every Client it
 * builds (its `extraClientMetadata.validator`), before its own checks.
 *
 * - Bounded: a name short enough to show, few redirect URIs, short strings, a small record.
 * - Redirect URIs: https; http only on loopback (any port, RFC 8252 §7.3, as VS Code's and
 *   Claude Code's random ports need); a private-use scheme (RFC 8252 §7.1, Cursor's `cursor://`)
 *   only for a public client. A client with a loopback or private-use redirect is made `native`,
 *   which is what makes oidc-provider match loopback redirects on any port and accept the scheme
 *   (Cursor registers `web` with `cursor://…`).
 * - What this server does not use is dropped, not refused (RFC 7591 §3.2.1 lets the server
 *   replace values): grant types other than code and refresh (Claude's document also lists
 *   jwt-bearer), a registered `scope` (claude.ai registers `claudeai`; the scope a client gets is
 *   decided at sign-in), and fields that would make this server fetch a URL or sign with a key
 *   (sector_identifier_uri, jwks_uri, jwks).
 *
 * A refusal is an RFC 7591 error naming the field and the limit: `invalid_redirect_uri` for a
 * redirect, `invalid_client_metadata` for the rest.
 */
import { errors } from "oidc-provider";

export const LIMITS = {
  /** Characters of `client_name`: the sign-in page shows it whole. */
  clientName: 100,
  redirectUris: 10,
  /** Characters of any one string (a URI, a contact), and entries of any other list. */
  string: 1_000,
  listEntries: 10,
  /** Bytes of the whole record as stored. */
  total: 4_096,
} as const;

const GRANT_TYPES = new Set(["authorization_code", "refresh_token"]);
/** Fields that make an authorization server fetch or sign (or that only ID tokens use). */
const DROPPED = [
  "scope",
  "sector_identifier_uri",
  "jwks_uri",
  "jwks",
  "id_token_signed_response_alg",
  "default_acr_values",
  "default_max_age",
  "require_auth_time",
  "initiate_login_uri",
];
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);
/** Schemes a browser runs or reads locally: never a place to send a code (oidc-provider's list, and more). */
const FORBIDDEN_SCHEMES = new Set([
  "javascript:",
  "vbscript:",
  "data:",
  "blob:",
  "file:",
  "about:",
  "filesystem:",
  "view-source:",
  "ws:",
  "wss:",
  "ftp:",
  "mailto:",
  "tel:",
  "sms:",
]);
/** Unicode controls and bidirectional overrides: they would make a name on the page lie. */
const UNSHOWABLE = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

const metadataError = (description: string) => new errors.InvalidClientMetadata(description);

type Metadata = Record<string, unknown>;

/** oidc-provider's extraClientMetadata validator (it runs once per Client built; see header). */
export function applyClientPolicy(metadata: Metadata): void {
  for (const field of DROPPED) delete metadata[field];
  if (Array.isArray(metadata.grant_types)) {
    metadata.grant_types = metadata.grant_types.filter((g) => typeof g === "string" && GRANT_TYPES.has(g));
  }
  checkName(metadata.client_name);
  const redirects = metadata.redirect_uris;
  checkRedirectCount(redirects);
  checkSizes(metadata);
  if (!Array.isArray(redirects)) return;
  const publicClient = metadata.token_endpoint_auth_method === "none";
  let native = false;
  redirects.forEach((uri, i) => {
    const kind = redirectKind(uri, `redirect_uris[${i}]`, publicClient);
    if (kind !== "https") native = true;
  });
  if (native) metadata.application_type = "native";
  metadata.redirect_uris = [...new Set(redirects.flatMap(withBareLoopbackForms))];
}

/**
 * oidc-provider matches redirect URIs as strings (with the port set aside for loopback), so
 * `http://127.0.0.1` registered does not match `http://127.0.0.1:33418/` sent, though RFC 3986
 * makes them one: VS Code registers the first and sends the second. A loopback URI with no path
 * is kept in both forms.
 */
function withBareLoopbackForms(uri: string): string[] {
  const bare = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(:\d+)?\/?$/.exec(uri);
  if (bare === null) return [uri];
  const base = uri.endsWith("/") ? uri.slice(0, -1) : uri;
  return [base, `${base}/`];
}

/** At most LIMITS.redirectUris distinct URIs (the bare loopback forms added below are no new ones). */
function checkRedirectCount(redirects: unknown): void {
  if (!Array.isArray(redirects)) return;
  const distinct = new Set(redirects.map((r) => (typeof r === "string" ? (URL.parse(r)?.href ?? r) : r)))
    .size;
  if (distinct > LIMITS.redirectUris) {
    throw metadataError(
      `redirect_uris: ${distinct} given; at most ${LIMITS.redirectUris} redirect URIs per client`,
    );
  }
}

function checkName(name: unknown): void {
  if (name === undefined) return;
  if (typeof name !== "string") throw metadataError("client_name: expected a string");
  if ([...name].length > LIMITS.clientName) {
    throw metadataError(`client_name: ${[...name].length} characters; at most ${LIMITS.clientName}`);
  }
  if (UNSHOWABLE.test(name)) {
    throw metadataError("client_name: contains control or text-direction characters, which are not shown");
  }
}

function checkSizes(metadata: Metadata): void {
  for (const [field, value] of Object.entries(metadata)) {
    if (typeof value === "string" && value.length > LIMITS.string) {
      throw metadataError(`${field}: ${value.length} characters; at most ${LIMITS.string}`);
    }
    if (!Array.isArray(value)) continue;
    if (field !== "redirect_uris" && value.length > LIMITS.listEntries) {
      throw metadataError(`${field}: ${value.length} entries; at most ${LIMITS.listEntries}`);
    }
    value.forEach((entry, i) => {
      if (typeof entry === "string" && entry.length > LIMITS.string) {
        throw metadataError(`${field}[${i}]: ${entry.length} characters; at most ${LIMITS.string}`);
      }
    });
  }
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  if (bytes > LIMITS.total) {
    throw metadataError(`the client's metadata is ${bytes} bytes; at most ${LIMITS.total}`);
  }
}

/** Checks one redirect URI; says whether it is https, loopback http or a private-use scheme. */
function redirectKind(uri: unknown, field: string, publicClient: boolean): "https" | "loopback" | "private" {
  const url = typeof uri === "string" ? URL.parse(uri) : null;
  if (url === null) throw metadataError(`${field}: not a URI`);
  if (url.hash !== "" || (typeof uri === "string" && uri.includes("#"))) {
    throw metadataError(`${field}: must not contain a fragment`);
  }
  if (url.username !== "" || url.password !== "")
    throw metadataError(`${field}: must not contain credentials`);
  if (url.protocol === "https:") return "https";
  if (url.protocol === "http:") {
    if (LOOPBACK_HOSTS.has(url.hostname)) return "loopback";
    throw metadataError(
      `${field}: plain http is allowed only on loopback (127.0.0.1, [::1] or localhost, any port); use https`,
    );
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol)) {
    throw metadataError(`${field}: the ${url.protocol.slice(0, -1)} scheme is not a redirect target`);
  }
  if (!publicClient) {
    throw metadataError(
      `${field}: a private-use scheme (${url.protocol}) is allowed only for a public client (token_endpoint_auth_method "none")`,
    );
  }
  return "private";
}

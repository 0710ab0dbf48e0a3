/**
 * The sign-in interaction: oidc-provider sends the browser here (`/oauth/sign-in/<uid>`) to log
 * the user in and ask consent in one page. The user brings their own service key; it is checked
 * with the service (`GET /api/generate/models`, which needs the `read` scope) before anything is
 * stored, then sealed in the user's account (oauth-accounts.ts) and a grant for this client and this
 * resource is made. The form carries a CSRF token bound to the interaction, and the interaction
 * itself is bound to the browser by oidc-provider's signed cookie. A refusal says why, naming the
 * scope or the format, never the key; nothing is stored for a refused attempt.
 *
 * The form is answered with a 303 to a page of ours (`…/continue`) that moves on by a meta
 * refresh, not with the redirect to the client: Chromium applies the form's `form-action` to every
 * redirect that follows a form submission, so a client callback that redirects onward (a bounce
 * page handing off to a desktop app) would be blocked and the user left on the form. The move
 * from our page is a plain navigation, which `form-action` does not govern.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type Provider from "oidc-provider";
import { LIMITS } from "../../config/service-limits.js";
import type { KeyCheck } from "../engine.js";
import { readBody } from "../http-body.js";
import type { Accounts } from "./oauth-accounts.js";
import type { OAuthLog } from "./oauth-log.js";
import { MCP_SCOPE } from "./oauth-provider.js";
import type { Sealing } from "./oauth-sealing.js";
import { continuePage, errorPage, sendPage, signInPage } from "./sign-in-page.js";

export interface SignInDeps {
  provider: Provider;
  sealing: Sealing;
  accounts: Accounts;
  resource: string;
  hashKey(apiKey: string): string;
  checkKey(apiKey: string): Promise<KeyCheck>;
  log: OAuthLog;
  /** A grant was made for this client over this key (the client's registration is kept from now on). */
  granted(clientId: string, keyHash: string): Promise<void>;
  /** With --sandbox: the sandbox's key, offered by a button (never written into the page). */
  sandboxKey?: string;
  /** The client's address as the rate limits count it (rate-limit.ts), for the log. */
  sourceOf(req: IncomingMessage): string;
}

/**
 * The scopes a request carries by now (oauth-provider.ts's `extraParams` leaves only these, and
 * always `mcp`): consent covers them; `mcp` is also granted on the resource below.
 */
const OIDC_SCOPES = new Set(["offline_access", MCP_SCOPE]);
const MAX_FORM_BYTES = 8 * 1024;

const REFUSALS: Record<string, string> = {
  FORMAT:
    "That is not a service key: a key is lgk_ followed by 64 lowercase hexadecimal characters. Copy it again from your account.",
  INVALID_API_KEY:
    "The service did not accept this key: it is revoked, expired or mistyped. Create or copy a key in your account, then try again.",
  INSUFFICIENT_SCOPE:
    "This key lacks the read scope, which listing models and following tasks need. Use a key with both the read and generate scopes.",
};

const refusal = (code: string): string =>
  REFUSALS[code] ??
  `The service could not check the key just now (${code.replace(/[^A-Z0-9_]/g, "")}). Try again in a moment.`;

interface Interaction {
  uid: string;
  params: Record<string, unknown>;
  prompt: { details: Record<string, unknown> };
  returnTo: string;
}

/** Serves `/oauth/sign-in/<uid>` (the form) and `/oauth/sign-in/<uid>/continue` (after it). */
export async function serveSignIn(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  d: SignInDeps,
): Promise<void> {
  const [uid = "", step] = path.split("/");
  let details: Interaction;
  try {
    details = (await d.provider.interactionDetails(req, res)) as unknown as Interaction;
  } catch {
    return expired(res);
  }
  if (details.uid !== decodeURIComponent(uid) || (step !== undefined && step !== "continue"))
    return expired(res);
  const clientId = String(details.params.client_id ?? "");
  const client = await d.provider.Client.find(clientId);
  const redirect = URL.parse(String(details.params.redirect_uri ?? ""));
  if (client === undefined || redirect === null) return expired(res);
  // An app's own scheme (cursor://…) is shown with its scheme: it names the app, not a web site.
  const web = redirect.protocol === "https:" || redirect.protocol === "http:";
  const redirectHost = web ? redirect.host : `${redirect.protocol}//${redirect.host}`;
  if (step === "continue") return sendPage(res, 200, continuePage(details.returnTo, redirectHost));
  const show = (status: number, error?: string) =>
    sendPage(
      res,
      status,
      signInPage({
        uid,
        csrf: d.sealing.csrfToken(uid),
        clientName: client.clientName ?? redirect.host ?? clientId,
        redirectHost,
        sandbox: d.sandboxKey !== undefined,
        ...(error === undefined ? {} : { error }),
      }),
    );

  if (req.method === "GET") return show(200);
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "GET, POST" }).end();
    return;
  }
  const form = await readForm(req);
  if (form === undefined || !d.sealing.csrfValid(uid, form.get("csrf"))) {
    return sendPage(
      res,
      403,
      errorPage(
        "invalid_request",
        "The form expired or did not come from this sign-in page. Start again from your app.",
      ),
    );
  }
  const action = form.get("action");
  const finish = async (result: Record<string, unknown>) => {
    await d.provider.interactionResult(req, res, result, { mergeWithLastSubmission: false });
    const next = `/oauth/sign-in/${encodeURIComponent(details.uid)}/continue`;
    res.writeHead(303, { location: next, "cache-control": "no-store" }).end();
  };
  if (action === "deny") {
    return finish({ error: "access_denied", error_description: "The user declined to connect their key" });
  }
  const apiKey =
    action === "sandbox" && d.sandboxKey !== undefined ? d.sandboxKey : (form.get("key") ?? "").trim();
  if (!LIMITS.apiKeyPattern.test(apiKey)) return show(400, refusal("FORMAT"));
  const check = await d.checkKey(apiKey).catch(() => ({ ok: false, code: "UNREACHABLE" }) as const);
  if (!check.ok) {
    d.log.keyRefused(clientId, check.code, d.sourceOf(req));
    return show(check.code === "INVALID_API_KEY" ? 401 : 403, refusal(check.code));
  }

  const keyHash = d.hashKey(apiKey);
  const grant = new d.provider.Grant({ accountId: keyHash, clientId });
  // One page for login and consent: grant at once what was asked of the server's own scopes.
  const asked = String(details.params.scope ?? "").split(" ");
  const oidc = asked.filter((s) => OIDC_SCOPES.has(s));
  if (oidc.length > 0) grant.addOIDCScope(oidc.join(" "));
  grant.addResourceScope(d.resource, MCP_SCOPE);
  const grantId = await grant.save();
  await d.accounts.remember(keyHash, apiKey, grantId);
  await d.granted(clientId, keyHash);
  return finish({ login: { accountId: keyHash }, consent: { grantId } });
}

function expired(res: ServerResponse): void {
  sendPage(
    res,
    400,
    errorPage(
      "invalid_request",
      "This sign-in page has expired or was opened in another browser. Start again from your app.",
    ),
  );
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  if (!(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) return undefined;
  const body = await readBody(req, MAX_FORM_BYTES);
  return body === undefined ? undefined : new URLSearchParams(body.toString("utf8"));
}

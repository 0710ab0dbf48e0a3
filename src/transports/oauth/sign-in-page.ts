/**
 * The pages a user sees while connecting a host: the sign-in form and the error page. Plain HTML,
 * one inline style allowed by its hash, no script, nothing from a third party; every value
 * written into them is escaped, and the key a user typed is never written back.
 */
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1b1b1b}
main{max-width:34rem;margin:1.5rem auto;padding:1.5rem;background:#fff;border:1px solid #d6d6d0;border-radius:8px}
h1{font-size:1.3rem;margin-top:0}label{display:block;font-weight:600;margin-top:1rem}
.returns{font-size:1.05rem;border-left:4px solid #2a6df4;background:#eef3fe;padding:.5rem .75rem;overflow-wrap:anywhere}
.name{display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:3;overflow:hidden;overflow-wrap:anywhere}
input{width:100%;box-sizing:border-box;font:inherit;padding:.5rem;margin:.25rem 0;border:1px solid #767676;border-radius:4px}
.help{color:#4a4a4a;font-size:.9rem}.error{border-left:4px solid #b00020;background:#fdecee;padding:.5rem .75rem;margin:1rem 0}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1.25rem}
button{font:inherit;padding:.5rem 1.25rem;border-radius:4px;border:1px solid #1b1b1b;background:#fff;cursor:pointer}
button.primary{background:#1b1b1b;color:#fff}button:focus-visible,input:focus-visible{outline:3px solid #2a6df4;outline-offset:2px}
code{font-size:.9em}`;
const STYLE_HASH = createHash("sha256").update(STYLE).digest("base64");

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );
}

function document(title: string, body: string, head = ""): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">${head}<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

export interface SignInView {
  uid: string;
  csrf: string;
  clientName: string;
  /** Where the browser returns after sign-in (the client's redirect URI's host). */
  redirectHost: string;
  /** Said above the form after a refused attempt; never contains the key. */
  error?: string;
  /** With --sandbox: offer the sandbox's own key. */
  sandbox: boolean;
}

export function signInPage(v: SignInView): string {
  const name = escapeHtml(v.clientName);
  const error =
    v.error === undefined
      ? ""
      : `<div class="error" role="alert" id="key-error"><strong>Not connected.</strong> ${escapeHtml(v.error)}</div>`;
  const sandbox = v.sandbox
    ? `<button type="submit" name="action" value="sandbox" formnovalidate>Use the sandbox key</button>`
    : "";
  return document(
    `Connect ${v.clientName} to generation-mcp`,
    `<h1>Connect an app to generation-mcp</h1>
<p class="returns" id="returns-to">Once you answer, your browser returns to <strong><code>${escapeHtml(v.redirectHost)}</code></strong>.</p>
<p><strong class="name" id="client-name">${name}</strong> asks to generate media with your service key. It will spend Gems from that key, within the key's own monthly cap, and see your generation requests.</p>
${error}
<form method="post" action="/oauth/sign-in/${encodeURIComponent(v.uid)}">
<input type="hidden" name="csrf" value="${escapeHtml(v.csrf)}">
<label for="key">Your service key</label>
<input id="key" name="key" type="password" autocomplete="off" spellcheck="false" autocapitalize="off"
 aria-describedby="key-help${v.error === undefined ? "" : " key-error"}"${v.error === undefined ? "" : ' aria-invalid="true"'} autofocus>
<p class="help" id="key-help">It starts with <code>lgk_</code>. It is checked with the service, then kept encrypted on this server; the app never sees it. Revoking the key in your account ends this connection.</p>
<div class="actions">
<button type="submit" class="primary" name="action" value="allow">Allow</button>
<button type="submit" name="action" value="deny" formnovalidate>Deny</button>
${sandbox}
</div>
</form>`,
  );
}

export function errorPage(error: string, description: string): string {
  return document(
    "Could not connect",
    `<h1>Could not connect</h1>
<div class="error" role="alert"><strong>${escapeHtml(error)}</strong>: ${escapeHtml(description)}</div>
<p>Go back to the app you were connecting and start again. If this keeps happening, tell the person who runs this server the error above.</p>`,
  );
}

/**
 * The page that follows the form (sign-in.ts): it moves on to the authorization endpoint, and from
 * there to the client, by a meta refresh, a navigation that the form's `form-action` does not govern.
 */
export function continuePage(resumeUrl: string, redirectHost: string): string {
  const href = escapeHtml(resumeUrl);
  return document(
    "Returning to the app",
    `<h1>Returning to the app</h1>
<p class="returns" id="returns-to">Your browser now returns to <strong><code>${escapeHtml(redirectHost)}</code></strong>.</p>
<p>If nothing happens, <a href="${href}">continue</a>.</p>`,
    `<meta http-equiv="refresh" content="0;url=${href}">`,
  );
}

/** The headers every page gets: no framing, no third-party anything, no caching, no referrer. */
export function pageHeaders(): Record<string, string> {
  const csp = [
    "default-src 'none'",
    `style-src 'sha256-${STYLE_HASH}'`,
    // Forms post only here; the page after a post moves on by navigation (continuePage).
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": csp,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
  };
}

export function sendPage(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, pageHeaders()).end(html);
}

/**
 * The built CLI in `--auth oauth` on a free loopback port, as the e2e tests of many signed-in
 * users start it: its issuer is its own address, and it believes X-Forwarded-For from loopback
 * (FORWARDED_ENV), so each user signed in with `signInDirect(…, { from: userAddress(i) })` counts
 * as an address of their own.
 */
import { freePort } from "../ledger/stores.js";
import { type Started, startHttpCli } from "./cli.js";
import { FORWARDED_ENV } from "./sign-in-direct.js";

export interface OAuthCliOptions {
  /** The test's isolated environment (isolatedEnv().env) and any setting of its own, e.g. GENERATION_STORE. */
  env: Record<string, string>;
  /** The service (a sandbox's URL). */
  baseUrl: string;
  /** GENERATION_AUTH_SECRET: 32 bytes, base64. */
  secret: string;
}

export async function startOAuthCli(o: OAuthCliOptions): Promise<{ cli: Started; issuer: string }> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const cli = await startHttpCli(["--auth", "oauth", "--port", String(port)], {
    ...o.env,
    GENERATION_BASE_URL: o.baseUrl,
    GENERATION_PUBLIC_URL: issuer,
    GENERATION_AUTH_SECRET: o.secret,
    ...FORWARDED_ENV,
  });
  return { cli, issuer };
}

/**
 * `--auth oauth` built in an order with no cycle: the token store (the ledger's keyed values), the
 * accounts over it and the operator's log first; then the engines, told to end every sign-in over a
 * key the service refuses later (revoked, expired), which is the accounts' work, said in the log;
 * then the gate, which resolves a checked token to its key's engine and checks a signing-in key with
 * the service through one.
 */

import type { Config } from "../../config/index.js";
import { trustedProxyList } from "../../config/oauth-settings.js";
import { serveLimits } from "../../config/serve-limits.js";
import { hashKey } from "../../ledger/identity.js";
import type { LazyLedger } from "../../ledger/lazy-ledger.js";
import { createEngines, type Engines } from "../engine.js";
import { Accounts } from "./oauth-accounts.js";
import { createOAuth, type FoundToken, type OAuthGate } from "./oauth-gate.js";
import { accountTag, type OAuthLog, oauthLog } from "./oauth-log.js";
import { Sealing } from "./oauth-sealing.js";
import { noticingRevocations, TokenChecks } from "./token-checks.js";

export interface OAuthStart {
  engines: Engines;
  gate: OAuthGate;
}

export async function startOAuth(config: Config, ledger: LazyLedger): Promise<OAuthStart> {
  if (config.publicUrl === undefined || config.authSecret === undefined) {
    throw new Error("--auth oauth needs GENERATION_PUBLIC_URL and GENERATION_AUTH_SECRET");
  }
  // Tokens checked lately are forgotten as soon as this replica deletes a token, grant or account.
  const tokenChecks = new TokenChecks<FoundToken>();
  const kv = noticingRevocations(await ledger.keyed(), () => tokenChecks.forgetAll());
  const sealing = new Sealing(config.authSecret);
  const lifetimes = {
    accessToken: config.accessTokenTtl,
    refreshToken: config.refreshTokenTtl,
    grantIdle: config.grantIdleTtl,
    refreshGrace: config.refreshGrace,
  };
  const accounts = new Accounts(kv, sealing, lifetimes.grantIdle * 1000);
  const log = oauthLog((line) => process.stderr.write(line));
  const engines = await createEngines(config, {
    ledger,
    onKeyRefused: (keyHash) =>
      void revokeKey(accounts, log, keyHash).catch((error: unknown) => {
        console.error(`generation-mcp: could not revoke the sign-ins of a refused key: ${String(error)}`);
      }),
  });
  const limits = serveLimits(config.serveLimits);
  const gate = await createOAuth({
    publicUrl: config.publicUrl,
    sealing,
    kv,
    accounts,
    hashKey,
    checkKey: (apiKey) => engines.checkKey(apiKey),
    engines,
    lifetimes,
    ...(config.trustedProxies === undefined
      ? {}
      : { trustedProxies: trustedProxyList(config.trustedProxies) }),
    log,
    signInRates: { perDeployment: limits.signInsPerMinute, reserve: limits.signInReserve },
    tokenChecks,
    ...(config.sandbox && engines.defaultApiKey !== undefined ? { sandboxKey: engines.defaultApiKey } : {}),
  });
  return { engines, gate };
}

/** The service refused a key: every sign-in over it ends, and the operator's log says so. */
async function revokeKey(accounts: Accounts, log: OAuthLog, keyHash: string): Promise<void> {
  const ended = await accounts.revoke(keyHash);
  log.revoked(
    `${ended} sign-in(s) of account ${accountTag(keyHash)}`,
    "the service refused its key (INVALID_API_KEY: revoked or expired)",
  );
}

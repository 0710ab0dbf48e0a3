/**
 * `--auth oauth` wired to the engines of engine.ts: the token store is the ledger's store, a key is
 * checked with the service through its own engine, and a key the service refuses later ends every
 * grant over it (see createEngines' onKeyRefused, which cli.ts points at `revokeKey`).
 */

import { ServiceError } from "../../client/service-errors.js";
import type { Config } from "../../config/index.js";
import { trustedProxyList } from "../../config/oauth-settings.js";
import { hashKey } from "../../ledger/identity.js";
import type { Engines } from "../engine.js";
import { createOAuth, type OAuthGate } from "./oauth-gate.js";

export async function startOAuth(config: Config, engines: Engines): Promise<OAuthGate> {
  if (config.publicUrl === undefined || config.authSecret === undefined) {
    throw new Error("--auth oauth needs GENERATION_PUBLIC_URL and GENERATION_AUTH_SECRET");
  }
  const kv = await engines.keyed();
  return createOAuth({
    publicUrl: config.publicUrl,
    secrets: config.authSecret,
    kv,
    hashKey,
    async checkKey(apiKey) {
      try {
        await engines.forKey(apiKey).client.listModels();
        return { ok: true };
      } catch (error) {
        return { ok: false, code: error instanceof ServiceError ? error.code : "UNREACHABLE" };
      }
    },
    hasKey: (keyHash) => engines.has(keyHash),
    useKey: (apiKey) => void engines.forKey(apiKey),
    lifetimes: {
      accessToken: config.accessTokenTtl,
      refreshToken: config.refreshTokenTtl,
      grantIdle: config.grantIdleTtl,
      refreshGrace: config.refreshGrace,
    },
    ...(config.trustedProxies === undefined
      ? {}
      : { trustedProxies: trustedProxyList(config.trustedProxies) }),
    write: (line) => process.stderr.write(line),
    ...(config.sandbox && engines.defaultApiKey !== undefined ? { sandboxKey: engines.defaultApiKey } : {}),
  });
}

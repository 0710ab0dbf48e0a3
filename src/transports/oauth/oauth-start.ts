/**
 * `--auth oauth` built in an order with no cycle: the token store (the ledger's keyed values) and
 * the accounts over it first; then the engines, told to end every sign-in over a key the service
 * refuses later (revoked, expired), which is the accounts' work; then the gate, which resolves a
 * checked token to its key's engine and checks a signing-in key with the service through one.
 */

import type { Config } from "../../config/index.js";
import type { LazyLedger } from "../../ledger/lazy-ledger.js";
import { hashKey } from "../../ledger/record.js";
import { createEngines, type Engines } from "../engine.js";
import { Accounts } from "./oauth-accounts.js";
import { createOAuth, type OAuthGate } from "./oauth-gate.js";
import { Sealing } from "./oauth-sealing.js";

export interface OAuthStart {
  engines: Engines;
  gate: OAuthGate;
}

export async function startOAuth(config: Config, ledger: LazyLedger): Promise<OAuthStart> {
  if (config.publicUrl === undefined || config.authSecret === undefined) {
    throw new Error("--auth oauth needs GENERATION_PUBLIC_URL and GENERATION_AUTH_SECRET");
  }
  const kv = await ledger.keyed();
  const sealing = new Sealing(config.authSecret);
  const accounts = new Accounts(kv, sealing);
  const engines = await createEngines(config, {
    ledger,
    onKeyRefused: (keyHash) =>
      void accounts.revoke(keyHash).catch((error: unknown) => {
        console.error(`generation-mcp: could not revoke the sign-ins of a refused key: ${String(error)}`);
      }),
  });
  const gate = await createOAuth({
    publicUrl: config.publicUrl,
    sealing,
    kv,
    accounts,
    hashKey,
    checkKey: (apiKey) => engines.checkKey(apiKey),
    engines,
    ...(config.sandbox && engines.defaultApiKey !== undefined ? { sandboxKey: engines.defaultApiKey } : {}),
  });
  return { engines, gate };
}

import { randomUUID } from "node:crypto";
import type { ServeLimits } from "../config/serve-limits.js";
import { DeploymentShares } from "../shared/deployment-shares.js";
import type { LimitLog } from "../shared/fair-shares.js";
import type { HttpServerOptions } from "./http-options.js";
import type { Keyed } from "./http-sessions.js";

/**
 * Each key's share of sessions and listen streams counted on every replica together, in the
 * ledger's store, when the server is given it (the CLI does); without it, per process.
 */
export function deploymentPools<E extends Keyed>(
  o: HttpServerOptions<E>,
  limits: ServeLimits,
  log: LimitLog,
): { sessions: DeploymentShares; listens: DeploymentShares } | undefined {
  const store = o.shareStore;
  if (store === undefined) return undefined;
  const replica = randomUUID();
  // Once a minute at most, however many claims the store fails.
  const onStoreError = () =>
    log.note(
      "pool shares",
      "the store",
      "each key's share of sessions and listen streams is counted on this replica alone: the store did not answer",
    );
  return {
    sessions: new DeploymentShares(store, {
      pool: "sessions",
      perOwner: o.sessions?.maxPerKey ?? limits.sessionsPerKey,
      replica,
      onStoreError,
    }),
    listens: new DeploymentShares(store, {
      pool: "listens",
      perOwner: limits.listensPerKey,
      replica,
      onStoreError,
    }),
  };
}

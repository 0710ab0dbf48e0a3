/**
 * bench/scale.ts's sign-ins: one client registered at the front (as one host serves all its
 * users), then users `from`..`from + count - 1` each with a sandbox key of their own
 * (`POST /sandbox/keys`) and an address of their own (`userAddress`, sent as X-Forwarded-For,
 * which the documented front's `option forwardfor` extends and the replicas believe), through
 * the sign-in page's form (test/helpers/sign-in-direct.ts), BENCH_SCALE_SIGN_IN_WIDTH at once.
 */
import { inParallel, registerClient, signInDirect, userAddress } from "../test/helpers/sign-in-direct.js";
import type { ScaleDeployment } from "./scale-deploy.js";

const WIDTH = Number(process.env.BENCH_SCALE_SIGN_IN_WIDTH ?? 16);
const clients = new WeakMap<ScaleDeployment, string>();

export async function signInAll(
  d: ScaleDeployment,
  from: number,
  count: number,
): Promise<Array<{ token: string; from: string }>> {
  const clientId = clients.get(d) ?? (await registerClient(d.issuer));
  clients.set(d, clientId);
  const keys = await d.newKeys(count);
  return inParallel(keys, WIDTH, async (key, i) => {
    const address = userAddress(from + i);
    const signedIn = await signInDirect(d.issuer, clientId, key, { from: address });
    return { token: signedIn.access, from: address };
  });
}

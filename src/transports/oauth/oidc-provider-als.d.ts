// oidc-provider's one AsyncLocalStorage (the module imported below), which its typings do not
// declare; provider-hooks.ts disables it between the provider's requests.
declare module "oidc-provider/lib/helpers/als.js" {
  import type { AsyncLocalStorage } from "node:async_hooks";

  const als: AsyncLocalStorage<unknown>;
  export default als;
}

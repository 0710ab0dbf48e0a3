import { AsyncLocalStorage } from "node:async_hooks";
import Provider from "oidc-provider";
import providerStorage from "oidc-provider/lib/helpers/als.js";
import { describe, expect, it } from "vitest";
import { hooksOnlyWhileServing, usesPromiseHooks } from "../../src/transports/oauth/provider-hooks.js";

const hooked = usesPromiseHooks(new AsyncLocalStorage());

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("hooksOnlyWhileServing", () => {
  it("guards the storage oidc-provider's requests run in (the one Provider.ctx reads)", () => {
    const marker = { request: 1 };
    expect(providerStorage.run(marker, () => Provider.ctx)).toBe(marker);
  });

  it.runIf(hooked)(
    "keeps each request's context while any is in flight, and disables the storage after the last",
    async () => {
      const storage = new AsyncLocalStorage<unknown>();
      const seen: unknown[] = [];
      const gates = [deferred(), deferred()];
      const after = deferred();
      let late: Promise<unknown> = Promise.resolve();
      const serve = hooksOnlyWhileServing(async (i: number) => {
        await storage.run({ i }, async () => {
          if (i === 0) late = after.promise.then(() => storage.getStore());
          await gates[i]?.promise;
          seen.push(storage.getStore());
        });
      }, storage);
      const first = serve(0);
      const second = serve(1);
      gates[0]?.resolve();
      await first;
      // The first has answered; the second, still in flight, keeps its context.
      gates[1]?.resolve();
      await second;
      expect(seen).toEqual([{ i: 0 }, { i: 1 }]);
      // Nothing in flight: the storage is disabled (its promise hooks off), so work left behind reads nothing.
      after.resolve();
      expect(await late).toBeUndefined();
      // The next request's run enables it again.
      const again = hooksOnlyWhileServing(async () => {
        await storage.run("next", async () => {
          await Promise.resolve();
          seen.push(storage.getStore());
        });
      }, storage);
      await again();
      expect(seen.at(-1)).toBe("next");
    },
  );

  it.runIf(hooked)("disables the storage also after a request that failed", async () => {
    const storage = new AsyncLocalStorage<unknown>();
    let late: Promise<unknown> = Promise.resolve();
    const release = deferred();
    const serve = hooksOnlyWhileServing(async () => {
      await storage.run("failing", async () => {
        late = release.promise.then(() => storage.getStore());
        throw new Error("refused");
      });
    }, storage);
    await expect(serve()).rejects.toThrow("refused");
    release.resolve();
    expect(await late).toBeUndefined();
  });

  it.skipIf(hooked)("changes nothing where AsyncLocalStorage needs no promise hooks", () => {
    const serve = async () => {};
    expect(hooksOnlyWhileServing(serve, new AsyncLocalStorage())).toBe(serve);
  });
});

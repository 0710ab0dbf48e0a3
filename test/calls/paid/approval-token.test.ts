/**
 * The approval token (src/calls/paid/approval.ts) over real SQLite ledgers: bound to the key, the
 * tool, the arguments (its own `approval` left out) and the amount; the secret shared by every
 * process on one store, or derived from GENERATION_AUTH_SECRET; used once across processes.
 */
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { checkApproval, consumeApproval, mintApproval } from "../../../src/calls/paid/approval.js";
import { hashKey, type Ledger, openLedger } from "../../../src/ledger/open-ledger.js";
import { approvalSecret } from "../../../src/mcp/answers.js";
import type { Engine } from "../../../src/mcp/context.js";
import { tempDir } from "../../helpers/temp.js";
import { available, freshStore, STORE_KINDS } from "../../ledger/stores.js";

const temp = tempDir("gen-mcp-approval-");
const ledgers: Ledger[] = [];
afterAll(() => temp.cleanup());
afterEach(async () => {
  await Promise.all(ledgers.splice(0).map((l) => l.close()));
});

/** A ledger on the SQLite file `name` in the temporary directory (two opens: two processes' views). */
async function ledgerAt(name: string): Promise<Ledger> {
  const ledger = await openLedger({ storeUri: `sqlite://${path.join(temp.dir, name)}` });
  ledgers.push(ledger);
  return ledger;
}

/** Only what approvals read of an engine. */
const engineOf = (ledger: Ledger, key: string, approvalKey?: Uint8Array): Engine =>
  ({ ledger, keyHash: hashKey(key), approvalKey }) as unknown as Engine;

const KEY_A = `lgk_${"a".repeat(64)}`;
const KEY_B = `lgk_${"b".repeat(64)}`;
const scope = { tool: "generate_image", args: { model: "m", prompt: "p", parameters: { outputCount: 2 } } };

describe("approval tokens", () => {
  it("verify for the same key, tool and arguments (approval left out), and for no other key", async () => {
    const ledger = await ledgerAt("one.sqlite");
    const a = engineOf(ledger, KEY_A);
    const { token, gems } = await mintApproval(a, scope, 16);
    expect(gems).toBe(16);
    const withToken = { ...scope, args: { ...scope.args, approval: token } };
    await expect(checkApproval(a, withToken, token)).resolves.toMatchObject({ gems: 16 });
    // Key order does not matter: the arguments are bound as canonical JSON.
    const reordered = { tool: scope.tool, args: { parameters: { outputCount: 2 }, prompt: "p", model: "m" } };
    await expect(checkApproval(a, reordered, token)).resolves.toMatchObject({ gems: 16 });
    await expect(checkApproval(engineOf(ledger, KEY_B), scope, token)).rejects.toThrow(
      /approval: this approval was issued to another API key/,
    );
  });

  it("share one secret between processes on one store, and count once across them", async () => {
    const first = engineOf(await ledgerAt("shared.sqlite"), KEY_A);
    const second = engineOf(await ledgerAt("shared.sqlite"), KEY_A);
    const { token } = await mintApproval(first, scope, 8);
    const granted = await checkApproval(second, scope, token);
    const both = await Promise.allSettled([
      consumeApproval(second, granted),
      consumeApproval(first, granted),
    ]);
    expect(both.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const failed = both.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(String(failed.reason)).toMatch(/already used/);
    // A process on another store has another secret: the token does not verify there.
    const elsewhere = engineOf(await ledgerAt("other.sqlite"), KEY_A);
    await expect(checkApproval(elsewhere, scope, token)).rejects.toThrow(/approval: /);
  });

  it("derive the secret from GENERATION_AUTH_SECRET when set, so replicas on separate stores agree", async () => {
    const secret = approvalSecret([Buffer.alloc(32, 7).toString("base64")]);
    expect(secret).toBeDefined();
    const one = engineOf(await ledgerAt("r1.sqlite"), KEY_A, secret);
    const two = engineOf(await ledgerAt("r2.sqlite"), KEY_A, secret);
    const { token } = await mintApproval(one, scope, 8);
    await expect(checkApproval(two, scope, token)).resolves.toMatchObject({ gems: 8 });
    expect(approvalSecret(undefined)).toBeUndefined();
  });
});

describe.each(STORE_KINDS)("approval tokens across two processes' views of one %s store", (kind) => {
  it("the same secret in both, and a token used once between them", async (t) => {
    if (!(await available(kind))) return t.skip();
    const store = await freshStore(kind);
    try {
      const open = async () => {
        const ledger = await openLedger({ storeUri: store.uri });
        ledgers.push(ledger);
        return engineOf(ledger, KEY_A);
      };
      const [one, two] = [await open(), await open()];
      const { token } = await mintApproval(one, scope, 12);
      const grants = await Promise.all([checkApproval(two, scope, token), checkApproval(one, scope, token)]);
      const used = await Promise.allSettled([
        consumeApproval(two, grants[0]),
        consumeApproval(one, grants[1]),
      ]);
      expect(used.map((u) => u.status).sort()).toEqual(["fulfilled", "rejected"]);
    } finally {
      await Promise.all(ledgers.splice(0).map((l) => l.close()));
      await store.cleanup();
    }
  });
});

/**
 * The ledger at rest, through the built CLI: the default ledger file (its records hold prompts,
 * and with --auth oauth the grants and clients) is private to its user, directory 0700 and the
 * file with its -wal and -shm 0600; and the OAuth keyed values (grants, clients, tokens) written
 * after the file was deleted under the running server are refused as claims are, the records the
 * open connection still holds written back, so users signed in before stay signed in after the
 * restart instead of silently losing their grants with the deleted file.
 */
import { existsSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { CLI, connectCli, isolatedEnv, startHttpCli } from "../helpers/cli.js";
import { initializeStatus } from "../helpers/oauth-flow.js";
import { registerClient, signInDirect } from "../helpers/sign-in-direct.js";
import { freePort } from "../ledger/stores.js";

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);
const dirs: Array<{ cleanup(): void }> = [];
afterAll(() => {
  for (const d of dirs) d.cleanup();
});

describe("the default ledger file", () => {
  it("is created private: its directory 0700, the file and its -wal and -shm 0600", async () => {
    const iso = isolatedEnv();
    dirs.push(iso);
    // No GENERATION_STORE: the default, in the user's data directory under HOME.
    const { GENERATION_STORE: _default, ...env } = iso.env;
    const { client } = await connectCli({ args: [CLI, "--sandbox"], env });
    try {
      const paid = await client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-fast", prompt: "a private lighthouse", wait: 0 },
      });
      expect(paid.isError).toBeFalsy();
      const dir = join(iso.dir, ".local", "share", "generation-mcp");
      const file = join(dir, "ledger.sqlite");
      expect(modeOf(dir)).toBe("700");
      for (const f of [file, `${file}-wal`, `${file}-shm`]) expect([f, modeOf(f)]).toEqual([f, "600"]);
      // The directories above it are the user's own and keep the usual mode.
      expect(modeOf(join(iso.dir, ".local", "share"))).not.toBe("700");
    } finally {
      await client.close();
    }
  });
});

describe("--auth oauth whose ledger file is deleted while it runs", () => {
  it("refuses new grants, writes the held ones back, and the users signed in before stay signed in", async () => {
    const iso = isolatedEnv();
    dirs.push(iso);
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const args = ["--sandbox", "--auth", "oauth", "--port", String(port)];
    const env = {
      ...iso.env,
      GENERATION_PUBLIC_URL: issuer,
      GENERATION_AUTH_SECRET: Buffer.alloc(32, 6).toString("base64"),
    };
    const status = (token: string) => initializeStatus(`${issuer}/mcp`, token);
    const file = join(iso.dir, "ledger.sqlite");
    const first = await startHttpCli(args, env);
    let early: string;
    try {
      const clientId = await registerClient(issuer);
      early = (await signInDirect(issuer, clientId, SANDBOX_API_KEY)).access;
      expect(await status(early)).toBe(200);
      for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) unlinkSync(f);
      // A new sign-in writes its interaction, grant and tokens: each refused, none into the lost file.
      const late = await signInDirect(issuer, clientId, SANDBOX_API_KEY).catch((e: Error) => e);
      expect(late).toBeInstanceOf(Error);
      expect(first.stderr()).toContain(`the ledger file ${file} was deleted while the server ran`);
      expect(first.stderr()).toContain(`written back to ${file}`);
      // Reading is not writing: the token signed in before still works until the restart.
      expect(await status(early)).toBe(200);
    } finally {
      await first.stop();
    }
    const second = await startHttpCli(args, env);
    try {
      expect(await status(early)).toBe(200);
      expect(modeOf(file)).toBe("600");
    } finally {
      await second.stop();
    }
  });
});

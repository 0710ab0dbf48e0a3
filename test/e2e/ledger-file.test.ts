/**
 * The shipped binary whose ledger file is deleted while it runs: paid calls are refused with a
 * message that says what happened and what to do, instead of being recorded into an unlinked file
 * that no restart would find (an identical call after the restart would be charged again).
 */
import { existsSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { CLI, connectCli, isolatedEnv } from "../helpers/cli.js";

const iso = isolatedEnv();
afterAll(() => iso.cleanup());

const textOf = (r: { content?: unknown }): string =>
  ((r.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n");

it("refuses paid calls once its ledger file is deleted, and says to restart", async () => {
  const { client } = await connectCli({ args: [CLI, "--sandbox"], env: iso.env, name: "ledger-file" });
  try {
    const image = (prompt: string) =>
      client.callTool({
        name: "generate_image",
        arguments: { model: "sandbox-image-fast", prompt, wait: 0 },
      });
    const first = await image("a lighthouse at dusk");
    expect(first.isError, textOf(first)).toBeFalsy();

    const file = join(iso.dir, "ledger.sqlite");
    for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) unlinkSync(f);

    const refused = await image("a harbour at dawn");
    expect(refused.isError).toBe(true);
    const text = textOf(refused);
    expect(text).toMatch(/^LEDGER_FILE_GONE: /);
    expect(text).toContain(`${file} was deleted while the server ran`);
    expect(text).toMatch(/Next: Restart the MCP server/);
    // Read-only tools do not need the ledger and keep working.
    const models = await client.callTool({ name: "list_models", arguments: {} });
    expect(models.isError).toBeFalsy();
  } finally {
    await client.close();
  }
});

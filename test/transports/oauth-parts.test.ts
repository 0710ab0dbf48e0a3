/**
 * The parts of `--auth oauth` that hold its promises on their own: sealed keys (AES-256-GCM bound
 * to their account, rotation, tampering), the CSRF token, the CIMD address guard, and the
 * settings that refuse to start without TLS or a secret, never echoing a value.
 */

import { once } from "node:events";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { parseCommand } from "../../src/config/parse.js";
import { addressAllowed, cimdGuard } from "../../src/transports/oauth/cimd-guard.js";
import { Sealing } from "../../src/transports/oauth/oauth-sealing.js";

const A = Buffer.alloc(32, 1).toString("base64");
const B = Buffer.alloc(32, 2).toString("base64");
const KEY = `lgk_${"ab".repeat(32)}`;

describe("sealed service keys", () => {
  it("open only for their own account, and not at all once tampered with", () => {
    const s = new Sealing([A]);
    const sealed = s.seal(KEY, "hash-1");
    expect(sealed).not.toContain("abab");
    expect(s.open(sealed, "hash-1")).toEqual({ plain: KEY, stale: false });
    expect(s.open(sealed, "hash-2")).toBeUndefined();
    const parsed = JSON.parse(sealed) as { ct: string };
    const flipped = JSON.stringify({ ...parsed, ct: `${parsed.ct.slice(0, -2)}AA` });
    expect(s.open(flipped, "hash-1")).toBeUndefined();
    expect(new Sealing([B]).open(sealed, "hash-1")).toBeUndefined();
  });

  it("rotate: a new first secret seals, the old one still opens (marked stale for re-sealing)", () => {
    const old = new Sealing([A]).seal(KEY, "h");
    const rotated = new Sealing([B, A]);
    expect(rotated.open(old, "h")).toEqual({ plain: KEY, stale: true });
    expect(rotated.open(rotated.seal(KEY, "h"), "h")).toEqual({ plain: KEY, stale: false });
  });

  it("CSRF tokens are bound to one interaction and survive rotation", () => {
    const s = new Sealing([A]);
    const token = s.csrfToken("uid-1");
    expect(s.csrfValid("uid-1", token)).toBe(true);
    expect(s.csrfValid("uid-2", token)).toBe(false);
    expect(s.csrfValid("uid-1", undefined)).toBe(false);
    expect(s.csrfValid("uid-1", `${token}x`)).toBe(false);
    expect(new Sealing([B, A]).csrfValid("uid-1", token)).toBe(true);
  });
});

describe("the CIMD address guard", () => {
  it("refuses loopback, private, link-local and reserved addresses, mapped ones included", () => {
    for (const a of [
      "127.0.0.1",
      "10.0.0.8",
      "172.16.1.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "fe80::1",
      "fd00::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
    ]) {
      expect(addressAllowed(a, false), a).toBe(false);
    }
    for (const a of ["93.184.216.34", "2606:4700::1111", "::ffff:93.184.216.34"])
      expect(addressAllowed(a, false), a).toBe(true);
  });

  it("allows loopback only when testing on loopback, and never private addresses", () => {
    expect(addressAllowed("127.0.0.1", true)).toBe(true);
    expect(addressAllowed("::1", true)).toBe(true);
    expect(addressAllowed("10.0.0.8", true)).toBe(false);
  });

  it("refuses a non-https client_id and a literal private address before any fetch", async () => {
    const why = (id: string) =>
      cimdGuard(id, false).then(
        () => "allowed",
        (e: { error?: string; error_description?: string }) => `${e.error}: ${e.error_description}`,
      );
    expect(await why("http://example.com/c.json")).toMatch(/^invalid_client: .*https/);
    expect(await why("https://192.168.0.10/c.json")).toMatch(
      /^invalid_client: .*private, loopback or reserved/,
    );
    expect(await why("https://[::1]/c.json")).toMatch(/private, loopback or reserved/);
    expect(await why("https://[::ffff:7f00:1]/c.json")).toMatch(/private, loopback or reserved/);
  });

  it("refuses every spelling of an internal address, with no connection made", async () => {
    // Listeners on loopback (both families) at one port: any connection attempt would be counted.
    let connections = 0;
    const count = (socket: Socket) => {
      connections++;
      socket.destroy();
    };
    const v4 = createServer(count).listen(0, "127.0.0.1");
    await once(v4, "listening");
    const port = (v4.address() as AddressInfo).port;
    const v6 = createServer(count).listen(port, "::1");
    await once(v6, "listening");
    const servers = [v4, v6];
    const hosts = [
      "[::7f00:1]",
      "[::127.0.0.1]",
      "[::ffff:127.0.0.1]",
      "[::ffff:7f00:1]",
      "[0:0:0:0:0:ffff:7f00:1]",
      "[64:ff9b::7f00:1]",
      "[64:ff9b::127.0.0.1]",
      "[64:ff9b:1::7f00:1]",
      "[2002:7f00:1::1]",
      "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
      "[0:0:0:0:0:0:0:1]",
      "[::1]",
      "[::]",
      "[fe80::1]",
      "[fd00::1]",
      "2130706433",
      "0x7f000001",
      "0x7f.1",
      "127.1",
      "0177.0.0.1",
      "017700000001",
      "127.000.000.001",
      "167772161",
      "0xa9fea9fe",
      "169.254.169.254",
      "0.0.0.0",
      "0",
    ];
    for (const host of hosts) {
      const id = `https://${host}:${port}/c.json`;
      await expect(cimdGuard(id, false), id).rejects.toMatchObject({ error: "invalid_client" });
    }
    for (const a of ["::7f00:1", "64:ff9b::a00:1", "2002:a00:1::1", "2001:db8::1", "::ffff:0:7f00:1"])
      expect(addressAllowed(a, true), a).toBe(false);
    for (const a of ["2130706433", "0x7f000001", "127.1"]) expect(addressAllowed(a, false), a).toBe(false);
    await new Promise((r) => setTimeout(r, 50));
    expect(connections).toBe(0);
    for (const s of servers) s.close();
  });
});

describe("--auth oauth settings", () => {
  const serve = (argv: string[], env: Record<string, string>) => parseCommand(["--sandbox", ...argv], env);
  const base = {
    GENERATION_AUTH: "oauth",
    GENERATION_PUBLIC_URL: "https://gm.internal.test",
    GENERATION_AUTH_SECRET: A,
  };

  it("starts with the public URL and a secret, over HTTP", () => {
    const c = serve(["--transport", "http"], base);
    expect(c.name === "serve" && c.config.auth).toBe("oauth");
    expect(c.name === "serve" && c.config.publicUrl).toBe("https://gm.internal.test");
    // The URL as users paste it, with /mcp, names the same origin.
    const pasted = serve(["--transport", "http"], {
      ...base,
      GENERATION_PUBLIC_URL: "https://gm.internal.test/mcp",
    });
    expect(pasted.name === "serve" && pasted.config.publicUrl).toBe("https://gm.internal.test");
  });

  it("refuses plain http off loopback, a missing secret or URL, a short secret, stdio; never echoing a value", () => {
    const refusals: Array<[string[], Record<string, string>, RegExp]> = [
      [
        ["--transport", "http"],
        { ...base, GENERATION_PUBLIC_URL: "http://gm.internal.test" },
        /GENERATION_PUBLIC_URL: must be https/,
      ],
      [
        ["--transport", "http"],
        { ...base, GENERATION_PUBLIC_URL: "" },
        /GENERATION_PUBLIC_URL: required with --auth oauth/,
      ],
      [
        ["--transport", "http"],
        { ...base, GENERATION_AUTH_SECRET: "" },
        /GENERATION_AUTH_SECRET: required with --auth oauth/,
      ],
      [
        ["--transport", "http"],
        { ...base, GENERATION_AUTH_SECRET: "c2hvcnQ=" },
        /GENERATION_AUTH_SECRET: entry 1 of 1: expected base64 of at least 32/,
      ],
      [[], base, /--auth: 'oauth' needs --transport http/],
      [
        ["--transport", "http"],
        { ...base, GENERATION_AUTH: "cookies" },
        /GENERATION_AUTH: expected 'key' or 'oauth'/,
      ],
    ];
    for (const [argv, env, message] of refusals) {
      expect(() => serve(argv, env)).toThrow(message);
      try {
        serve(argv, env);
      } catch (error) {
        expect(String(error)).not.toContain("c2hvcnQ");
        expect(String(error)).not.toContain(A);
        expect(String(error)).not.toContain("gm.internal.test");
      }
    }
    expect(
      serve(["--transport", "http"], { ...base, GENERATION_PUBLIC_URL: "http://127.0.0.1:3333" }).name,
    ).toBe("serve");
  });

  it("reports every missing or malformed OAuth setting in the same run, one line each", () => {
    const lines = (argv: string[], env: Record<string, string>): string[] => {
      try {
        serve(argv, env);
      } catch (error) {
        return (error as { lines: string[] }).lines;
      }
      return [];
    };
    expect(lines([], { GENERATION_AUTH: "oauth" })).toEqual([
      expect.stringMatching(/^--auth: 'oauth' needs --transport http/),
      expect.stringMatching(/^GENERATION_PUBLIC_URL: required with --auth oauth/),
      expect.stringMatching(/^GENERATION_AUTH_SECRET: required with --auth oauth/),
    ]);
    // A malformed one is named as such, and not again as missing.
    expect(lines([], { GENERATION_AUTH: "oauth", GENERATION_PUBLIC_URL: "http://gm.internal.test" })).toEqual(
      [
        expect.stringMatching(/^GENERATION_PUBLIC_URL: must be https/),
        expect.stringMatching(/^--auth: 'oauth' needs --transport http/),
        expect.stringMatching(/^GENERATION_AUTH_SECRET: required with --auth oauth/),
      ],
    );
  });
});

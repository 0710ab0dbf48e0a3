/**
 * The rules of `--auth oauth` that hold on their own, before any request: what a client may be
 * (client-policy.ts), who a request is counted against (rate-limit.ts; the limits themselves in
 * oauth-limits.test.ts), how a stored client secret is compared (oauth-adapter.ts), and the
 * lifetime and proxy settings.
 */
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { trustedProxyList } from "../../src/config/oauth-settings.js";
import { parseCommand } from "../../src/config/parse.js";
import { applyClientPolicy } from "../../src/transports/oauth/client-policy.js";
import { secretMatches, storedSecret } from "../../src/transports/oauth/oauth-adapter.js";
import { clientAddress, sourceOf } from "../../src/transports/oauth/rate-limit.js";

const policy = (metadata: Record<string, unknown>): Record<string, unknown> => {
  const m: Record<string, unknown> = { token_endpoint_auth_method: "none", ...metadata };
  applyClientPolicy(m);
  return m;
};
const refusal = (metadata: Record<string, unknown>) => {
  try {
    policy(metadata);
  } catch (error) {
    const e = error as { error: string; error_description: string };
    return `${e.error}: ${e.error_description}`;
  }
  throw new Error("expected a refusal");
};

describe("client policy", () => {
  it("accepts https, loopback http on any port and, for a public client, an app's scheme (made native)", () => {
    expect(
      policy({ redirect_uris: ["https://claude.ai/api/mcp/auth_callback"] }).application_type,
    ).toBeUndefined();
    const cursor = policy({
      application_type: "web",
      redirect_uris: ["cursor://anysphere.cursor-mcp/oauth/callback"],
    });
    expect(cursor.application_type).toBe("native");
    const vscode = policy({ redirect_uris: ["http://127.0.0.1", "https://vscode.dev/redirect"] });
    expect(vscode.application_type).toBe("native");
    expect(vscode.redirect_uris).toEqual([
      "http://127.0.0.1",
      "http://127.0.0.1/",
      "https://vscode.dev/redirect",
    ]);
  });

  it("refuses, naming the field and the limit", () => {
    expect(refusal({ redirect_uris: ["http://evil.example/cb"] })).toMatch(
      /^invalid_redirect_uri: redirect_uris\[0\]: plain http is allowed only on loopback/,
    );
    expect(refusal({ redirect_uris: ["javascript:alert(1)"] })).toBe(
      "invalid_redirect_uri: redirect_uris[0]: the javascript scheme is not a redirect target",
    );
    expect(
      refusal({ token_endpoint_auth_method: "client_secret_post", redirect_uris: ["myapp://cb"] }),
    ).toMatch(
      /^invalid_redirect_uri: redirect_uris\[0\]: a private-use scheme \(myapp:\) is allowed only for a public client/,
    );
    expect(refusal({ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) })).toBe(
      "invalid_redirect_uri: redirect_uris: 11 given; at most 10 redirect URIs per client",
    );
    expect(refusal({ client_name: "x".repeat(101), redirect_uris: [] })).toBe(
      "invalid_client_metadata: client_name: 101 characters; at most 100",
    );
    expect(refusal({ client_name: "Safe\u202Eevil", redirect_uris: [] })).toMatch(
      /^invalid_client_metadata: client_name: contains control/,
    );
    expect(refusal({ redirect_uris: [`https://a.example/${"p".repeat(1_000)}`] })).toBe(
      "invalid_redirect_uri: redirect_uris[0]: 1018 characters; at most 1000",
    );
    const big = Object.fromEntries(
      ["client_uri", "logo_uri", "policy_uri", "tos_uri"].map((f) => [
        f,
        `https://a.example/${"q".repeat(950)}`,
      ]),
    );
    expect(refusal({ ...big, redirect_uris: [`https://a.example/${"r".repeat(950)}`] })).toMatch(
      /^invalid_client_metadata: the client's metadata is \d+ bytes; at most 4096$/,
    );
  });

  it("drops what this server does not use instead of refusing it", () => {
    const m = policy({
      scope: "claudeai",
      grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
      sector_identifier_uri: "https://a.example/sector",
      jwks_uri: "https://a.example/jwks",
      redirect_uris: ["https://a.example/cb"],
    });
    expect(m.scope).toBeUndefined();
    expect(m.sector_identifier_uri).toBeUndefined();
    expect(m.jwks_uri).toBeUndefined();
    expect(m.grant_types).toEqual(["authorization_code", "refresh_token"]);
  });
});

const request = (peer: string, forwarded?: string) =>
  ({
    socket: { remoteAddress: peer },
    headers: forwarded === undefined ? {} : { "x-forwarded-for": forwarded },
  }) as unknown as IncomingMessage;

describe("the registration limit", () => {
  it("believes X-Forwarded-For only from listed proxies, read from the right", () => {
    const trusted = trustedProxyList(["10.0.0.0/8", "::1"]);
    expect(clientAddress(request("203.0.113.9", "198.51.100.1"), trusted)).toBe("203.0.113.9");
    expect(clientAddress(request("10.1.2.3", "198.51.100.1"), undefined)).toBe("10.1.2.3");
    expect(clientAddress(request("10.1.2.3", "6.6.6.6, 198.51.100.1"), trusted)).toBe("198.51.100.1");
    expect(clientAddress(request("::ffff:10.1.2.3", "198.51.100.1, 10.9.9.9"), trusted)).toBe("198.51.100.1");
    expect(clientAddress(request("::1", "not-an-address"), trusted)).toBe("::1");
  });

  it("counts an IPv6 client by its /64", () => {
    expect(sourceOf("2001:db8:1:2::5")).toBe("2001:db8:1:2::/64");
    expect(sourceOf("2001:0db8:0001:0002:ffff:0:0:1")).toBe("2001:db8:1:2::/64");
    expect(sourceOf("203.0.113.9")).toBe("203.0.113.9");
    expect(sourceOf("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(sourceOf("2001:DB8:1:2:0:0:0:7")).toBe("2001:db8:1:2::/64");
    expect(sourceOf("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
  });
});

describe("client secrets at rest", () => {
  it("are stored as a hash and compared with it; a plain one stored before still matches", () => {
    const stored = storedSecret("s3cret");
    expect(stored).not.toContain("s3cret");
    expect(secretMatches(stored, "s3cret")).toBe(true);
    expect(secretMatches(stored, "s3cre")).toBe(false);
    expect(secretMatches("plain-old", "plain-old")).toBe(true);
    expect(secretMatches(undefined, "x")).toBe(false);
  });
});

describe("lifetime and proxy settings", () => {
  const base = {
    GENERATION_AUTH: "oauth",
    GENERATION_PUBLIC_URL: "https://mcp.example.com",
    GENERATION_AUTH_SECRET: Buffer.alloc(32, 1).toString("base64"),
  };
  const config = (env: Record<string, string>) => {
    const command = parseCommand(["--sandbox", "--transport", "http"], { ...base, ...env });
    if (command.name !== "serve") throw new Error("expected serve");
    return command.config;
  };
  const message = (env: Record<string, string>) => {
    try {
      config(env);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error("expected a refusal");
  };

  it("default to what hosts that never refresh need, and read durations", () => {
    expect(config({})).toMatchObject({
      accessTokenTtl: 30 * 86_400,
      refreshTokenTtl: 90 * 86_400,
      grantIdleTtl: 90 * 86_400,
      refreshGrace: 60,
    });
    expect(config({ GENERATION_AUTH_ACCESS_TTL: "12h", GENERATION_AUTH_REFRESH_GRACE: "0" })).toMatchObject({
      accessTokenTtl: 43_200,
      refreshGrace: 0,
    });
    expect(config({ GENERATION_TRUSTED_PROXIES: "10.0.0.0/8, fd00::/8" }).trustedProxies).toEqual([
      "10.0.0.0/8",
      "fd00::/8",
    ]);
  });

  it("refuse nonsense, naming the variable and the range", () => {
    expect(message({ GENERATION_AUTH_ACCESS_TTL: "2w" })).toBe(
      "GENERATION_AUTH_ACCESS_TTL: expected a duration from 1m to 365d, such as 60s, 15m, 12h or 30d (value not shown)",
    );
    expect(message({ GENERATION_AUTH_REFRESH_GRACE: "1h" })).toMatch(
      /^GENERATION_AUTH_REFRESH_GRACE: 1h is out of range; expected a duration from 0s to 10m/,
    );
    expect(message({ GENERATION_TRUSTED_PROXIES: "10.0.0.0/33" })).toBe(
      "GENERATION_TRUSTED_PROXIES: entry 1 of 1 is not an IP address or CIDR range (such as 10.0.0.0/8 or fd00::/8)",
    );
  });
});

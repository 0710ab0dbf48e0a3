/**
 * Which Host headers the HTTP transport accepts: `/healthz` answers a balancer's probe that sends
 * none (HAProxy's default check, HTTP/1.0) and changes nothing; every other path, and a probe that
 * does send a foreign Host or Origin, keeps the DNS-rebinding checks. Public names
 * (GENERATION_PUBLIC_URL's, GENERATION_ALLOWED_HOSTS) are accepted, but never lend a request the
 * server's own key.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpServerHandle } from "../../src/transports/http-server.js";
import { INIT, KEY_A, KEY_ENV, startProbe } from "./http-probe.js";

let handle: HttpServerHandle;
let healthy = true;
let checks = 0;

beforeAll(async () => {
  handle = await startProbe({
    defaultApiKey: KEY_ENV,
    publicHosts: ["mcp.example.com"],
    health: async () => {
      checks++;
      if (!healthy) throw new Error("ledger at /secret/path unusable");
    },
  });
});
afterAll(() => handle.close());

/** One request written by hand, as a balancer's check writes it: fetch always adds a Host. */
function raw(request: string, body = ""): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(handle.port, "127.0.0.1", () => socket.end(`${request}\r\n\r\n${body}`));
    let text = "";
    socket.on("data", (d: Buffer) => {
      text += d.toString();
    });
    socket.on("error", reject);
    socket.on("end", () => resolve({ status: Number(text.split(" ")[1]), text }));
  });
}

const bodyOf = (text: string) => text.slice(text.indexOf("\r\n\r\n") + 4);

describe("/healthz", () => {
  it("answers HAProxy's default check (HTTP/1.0, no Host): 200, or 503 naming nothing", async () => {
    healthy = true;
    const up = await raw("GET /healthz HTTP/1.0");
    expect(up.status).toBe(200);
    expect(JSON.parse(bodyOf(up.text))).toEqual({ status: "ok", ledger: "usable" });
    healthy = false;
    const down = await raw("GET /healthz HTTP/1.0");
    expect(down.status).toBe(503);
    expect(down.text).not.toContain("secret");
    healthy = true;
  });

  it("answers a check that names the replica or the public name; refuses a foreign Host or Origin", async () => {
    expect((await raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close")).status).toBe(200);
    expect((await raw("GET /healthz HTTP/1.1\r\nHost: mcp.example.com\r\nConnection: close")).status).toBe(
      200,
    );
    const before = checks;
    const foreign = await raw("GET /healthz HTTP/1.1\r\nHost: evil.example\r\nConnection: close");
    expect(foreign.status).toBe(403);
    const page = await raw("GET /healthz HTTP/1.0\r\nOrigin: http://evil.example");
    expect(page.status).toBe(403);
    // A refused probe did not even look at the ledger.
    expect(checks).toBe(before);
  });
});

describe("every other path keeps the Host check", () => {
  const post = (host: string | undefined, auth?: string) =>
    raw(
      [
        "POST /mcp HTTP/1.0",
        ...(host === undefined ? [] : [`Host: ${host}`]),
        ...(auth === undefined ? [] : [`Authorization: Bearer ${auth}`]),
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        `Content-Length: ${Buffer.byteLength(INIT)}`,
      ].join("\r\n"),
      INIT,
    );

  it("/mcp without Host is refused, as is a foreign Host", async () => {
    const none = await post(undefined, KEY_A);
    expect(none.status).toBe(403);
    expect(bodyOf(none.text)).toMatch(/Host/);
    expect((await post("evil.example", KEY_A)).status).toBe(403);
  });

  it("the public name is accepted with the caller's own key, and never runs under the server's key", async () => {
    expect(handle.hosts).toContain("mcp.example.com");
    expect(handle.hosts).toContain("127.0.0.1");
    expect((await post("mcp.example.com", KEY_A)).status).toBe(200);
    const keyless = await post("mcp.example.com");
    expect(keyless.status).toBe(401);
    expect(bodyOf(keyless.text)).toMatch(/Authorization header/);
    // Reached by a loopback name, the same request runs under GENERATION_API_KEY as before.
    expect((await post("127.0.0.1")).status).toBe(200);
  });
});

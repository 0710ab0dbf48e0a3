/**
 * The built CLI against a service over https, as a real deployment is: the JSON exchanges' own
 * transport (src/client/node-exchange.ts) takes node:https on the first https exchange. A TLS
 * front with a self-signed certificate (trusted through NODE_EXTRA_CA_CERTS, as an operator's own
 * CA would be) forwards to the sandbox; list_models and a paid call go through it, and the front
 * sees one TLS connection carry them (keep-alive).
 */
import http from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";
import { CLI, type ConnectedCli, connectCli, isolatedEnv, startSandboxCli } from "../helpers/cli.js";
import { selfSignedCert } from "../helpers/oauth-flow.js";

const iso = isolatedEnv();
let sandbox: Awaited<ReturnType<typeof startSandboxCli>>;
let front: https.Server;
let cli: ConnectedCli;
const sockets = new Set<Socket>();
const paths: string[] = [];

beforeAll(async () => {
  sandbox = await startSandboxCli(iso.env);
  const tls = selfSignedCert(iso.dir);
  const target = new URL(sandbox.url);
  front = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    sockets.add(req.socket);
    paths.push(`${req.method} ${req.url}`);
    const out = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((r) => front.listen(0, "127.0.0.1", r));
  const base = `https://127.0.0.1:${(front.address() as AddressInfo).port}`;
  cli = await connectCli({
    args: [CLI],
    env: {
      ...iso.env,
      GENERATION_BASE_URL: base,
      GENERATION_API_KEY: SANDBOX_API_KEY,
      NODE_EXTRA_CA_CERTS: tls.certPath,
    },
    name: "https-host",
  });
});

afterAll(async () => {
  await cli?.client.close();
  front?.closeAllConnections();
  await new Promise((r) => front?.close(r));
  await sandbox?.stop();
  iso.cleanup();
});

describe("a service over https", () => {
  it("lists models and takes a paid call, over one kept-alive TLS connection", async () => {
    const listed = await cli.client.callTool({ name: "list_models", arguments: {} });
    expect(listed.isError).toBeFalsy();
    const before = sockets.size;
    const paid = await cli.client.callTool({
      name: "generate_image",
      arguments: { model: "sandbox-image-fast", prompt: "a lighthouse over https", wait: 0 },
    });
    expect(paid.isError).toBeFalsy();
    const task = (paid.structuredContent as { task: { id: string } }).task;
    expect(task.id).toMatch(/^task_/);
    expect(paths).toContain("POST /api/generate/image");
    // The paid call reused the connection list_models (or the start-up key check) opened.
    expect(sockets.size).toBe(before);
  });
});

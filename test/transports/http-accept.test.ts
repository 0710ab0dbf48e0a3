/**
 * The HTTP server's listening sockets (src/transports/http-accept.ts): on Linux several on one
 * port, every one handing its connections to the one server, all closed with it.
 */
import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { type AddressInfo, createServer as netServer } from "node:net";
import { describe, expect, it } from "vitest";
import { ACCEPT_SOCKETS, listenShared } from "../../src/transports/http-accept.js";

/** Listening sockets on `port`, as `ss` lists them (undefined where there is no `ss`). */
function listeners(port: number): number | undefined {
  try {
    const out = execFileSync("ss", ["-ltnH", `sport = :${port}`], { encoding: "utf8" });
    return out.split("\n").filter((l) => l.trim() !== "").length;
  } catch {
    return undefined;
  }
}

const closeServer = (s: Server) => new Promise<void>((r) => s.close(() => r()));

describe("listenShared", () => {
  it("serves every connection through the one server, and frees the port when it closes", async () => {
    let served = 0;
    const server = createServer((_req, res) => {
      served++;
      res.setHeader("connection", "close");
      res.end("ok");
    });
    await listenShared(server, 0, "127.0.0.1");
    const port = (server.address() as AddressInfo).port;
    if (process.platform === "linux") {
      const n = listeners(port);
      if (n !== undefined) expect(n).toBe(ACCEPT_SOCKETS);
    }
    // New connections each: the kernel spreads them over the sockets, every one answered.
    const answers = await Promise.all(
      Array.from({ length: 120 }, () =>
        fetch(`http://127.0.0.1:${port}/`, { headers: { connection: "close" } }).then((r) => r.text()),
      ),
    );
    expect(answers.every((a) => a === "ok")).toBe(true);
    expect(served).toBe(120);
    await closeServer(server);
    await new Promise((r) => setTimeout(r, 50));
    if (process.platform === "linux") expect(listeners(port) ?? 0).toBe(0);
    // Nothing of ours holds the port: a plain listener takes it.
    const plain = netServer();
    await new Promise<void>((resolve, reject) => {
      plain.once("error", reject);
      plain.listen(port, "127.0.0.1", () => resolve());
    });
    await new Promise<void>((r) => plain.close(() => r()));
  });

  it("fails on a port in use, even by another server listening the same way", async () => {
    const first = createServer((_req, res) => res.end("first"));
    await listenShared(first, 0, "127.0.0.1");
    const port = (first.address() as AddressInfo).port;
    try {
      // Without the plain first bind, this one would join the first's sockets and take a share.
      const second = createServer((_req, res) => res.end("second"));
      await expect(listenShared(second, port, "127.0.0.1")).rejects.toMatchObject({ code: "EADDRINUSE" });
      const answers = await Promise.all(
        Array.from({ length: 40 }, () =>
          fetch(`http://127.0.0.1:${port}/`, { headers: { connection: "close" } }).then((r) => r.text()),
        ),
      );
      expect(new Set(answers)).toEqual(new Set(["first"]));
    } finally {
      await closeServer(first);
    }
  });

  it("takes a named free port with all its sockets", async () => {
    const probe = netServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const server = createServer((_req, res) => res.end("ok"));
    await listenShared(server, port, "127.0.0.1");
    try {
      if (process.platform === "linux") {
        const n = listeners(port);
        if (n !== undefined) expect(n).toBe(ACCEPT_SOCKETS);
      }
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("ok");
    } finally {
      await closeServer(server);
    }
  });
});

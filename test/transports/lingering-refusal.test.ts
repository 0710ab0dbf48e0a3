/**
 * A body refused before it is read whole (too large, over the memory budget, not JSON) is answered
 * and then read and dropped for a while (refuseUnread in src/transports/http-guard.ts): a server
 * that closed at once with bytes unread would make the kernel reset the connection, and the client
 * would report the reset, not the refusal. The client here keeps sending after the refusal, as an
 * upload does, and reads only once it has sent 8 MiB more.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { HttpServerHandle } from "../../src/transports/http-server.js";
import { KEY_ENV, startProbe } from "./http-probe.js";

let handle: HttpServerHandle;
beforeAll(async () => {
  handle = await startProbe({
    defaultApiKey: KEY_ENV,
  });
});
afterAll(() => handle.close());

/** Sends the head and then `sent` bytes of a `declared`-byte body, then reads what came back. */
function refusedAfterSending(contentType: string, declared: number, sent: number): Promise<string> {
  const url = new URL(handle.url);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(url.port), url.hostname);
    let answer = "";
    socket.on("data", (d) => {
      answer += d.toString("latin1");
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(answer));
    socket.pause(); // nothing read until the body is sent, as a client busy uploading
    socket.write(
      `POST /mcp HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: ${contentType}\r\n` +
        `accept: application/json, text/event-stream\r\ncontent-length: ${declared}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    let left = sent;
    const pump = (): void => {
      while (left > 0) {
        left -= chunk.length;
        if (!socket.write(chunk)) return void socket.once("drain", pump);
      }
      socket.resume();
      setTimeout(() => socket.end(), 100);
    };
    pump();
  });
}

it("answers 413 to a declared body past the limit, and the client reads it after sending on", async () => {
  const answer = await refusedAfterSending("application/json", 49 * 1024 * 1024, 8 * 1024 * 1024);
  expect(answer).toMatch(/^HTTP\/1\.1 413 /);
  expect(answer).toContain("the limit is 48 MiB");
});

it("answers 415 to a body that is not JSON, read after sending on", async () => {
  const answer = await refusedAfterSending("text/plain", 16 * 1024 * 1024, 8 * 1024 * 1024);
  expect(answer).toMatch(/^HTTP\/1\.1 415 /);
});

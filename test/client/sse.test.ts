/**
 * The chat stream is complete only with `data: [DONE]` after the chunks. Cut streams,
 * error frames and stalls are IncompleteStreamError (uncertain: replay the identity),
 * carrying the text that did arrive; frames split anywhere across network chunks decode.
 */
import { delay, HttpResponse, http } from "msw";
import { describe, expect, it, vi } from "vitest";
import { buildChatBody } from "../../src/client/requests.js";
import { ServiceClient } from "../../src/client/service-client.js";
import { IncompleteStreamError, ServiceError } from "../../src/client/service-errors.js";
import { readChatStream } from "../../src/client/sse.js";
import { drive, useFakeTime } from "../helpers/fake-time.js";
import { BASE, client, KEY, mockService } from "./client-helpers.js";

const { server } = mockService();
const enc = new TextEncoder();

const chunk = (content: string | null, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({
    id: "c1",
    object: "chat.completion.chunk",
    model: "text-1",
    choices: [{ index: 0, delta: content === null ? {} : { content } }],
    ...extra,
  })}\n\n`;
const final = chunk(null, {
  choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
});
const DONE = "data: [DONE]\n\n";

/** A body that delivers `text` in the given pieces (byte offsets may split frames and characters). */
function pieces(text: string, cuts: number[]): ReadableStream<Uint8Array> {
  const bytes = enc.encode(text);
  const bounds = [0, ...cuts, bytes.length];
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i >= bounds.length - 1) return c.close();
      c.enqueue(bytes.slice(bounds[i], bounds[i + 1]));
      i++;
    },
  });
}

const whole = (text: string) => pieces(text, []);
const incomplete = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected an incomplete stream");
    },
    (e: unknown) => e as IncompleteStreamError,
  );

describe("readChatStream", () => {
  it("a complete stream accumulates delta content and keeps usage and finish_reason", async () => {
    const seen: string[] = [];
    const r = await readChatStream(whole(chunk("Hel") + chunk("lo, ") + chunk("world") + final + DONE), {
      onDelta: (_d, soFar) => seen.push(soFar),
    });
    expect(r).toEqual({
      id: "c1",
      model: "text-1",
      content: "Hello, world",
      finishReason: "stop",
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      streamed: true,
    });
    expect(seen).toEqual(["Hel", "Hello, ", "Hello, world"]);
  });

  it("frames split mid-frame and mid-character across network chunks decode the same", async () => {
    const text = chunk("Grüße ") + chunk("€ and ✓") + final + DONE;
    const bytes = enc.encode(text);
    // Cut inside "data:", inside the JSON, inside a 3-byte "€", and between the two newlines.
    const euro = bytes.indexOf(0xe2);
    const cuts = [3, 20, euro + 1, euro + 2, text.indexOf("\n\n") + 1, bytes.length - 5];
    const r = await readChatStream(
      pieces(
        text,
        cuts.sort((a, b) => a - b),
      ),
    );
    expect(r.content).toBe("Grüße € and ✓");
    expect(r.usage?.total_tokens).toBe(7);
  });

  it("every single byte in its own chunk still decodes", async () => {
    const text = chunk("one ") + chunk("two") + final + DONE;
    const cuts = Array.from({ length: enc.encode(text).length - 1 }, (_, i) => i + 1);
    expect((await readChatStream(pieces(text, cuts))).content).toBe("one two");
  });

  it("CRLF line ends and comment lines are accepted", async () => {
    const text = `: keep-alive\r\n\r\n${chunk("hi").replaceAll("\n", "\r\n")}${final}${DONE}`;
    expect((await readChatStream(whole(text))).content).toBe("hi");
  });

  it("a replay may deliver the whole saved answer in one chunk", async () => {
    const one = chunk("The whole answer.", {
      choices: [{ index: 0, delta: { content: "The whole answer." }, finish_reason: "stop" }],
      usage: { total_tokens: 9 },
    });
    const r = await readChatStream(whole(one + DONE));
    expect(r).toMatchObject({
      content: "The whole answer.",
      finishReason: "stop",
      usage: { total_tokens: 9 },
    });
  });

  it("a stream cut before [DONE] is incomplete, with the partial text", async () => {
    const err = await incomplete(readChatStream(whole(chunk("Hel") + chunk("lo") + final)));
    expect(err).toBeInstanceOf(IncompleteStreamError);
    expect(err).toMatchObject({
      code: "INCOMPLETE_STREAM",
      outcome: "uncertain",
      status: 200,
      partialContent: "Hello",
    });
    expect(err.message).toMatch(/before \[DONE\]/);
  });

  it("a cut in the middle of the [DONE] frame is still incomplete", async () => {
    const err = await incomplete(readChatStream(whole(`${chunk("Hi")}data: [DO`)));
    expect(err.partialContent).toBe("Hi");
  });

  it("an error frame is incomplete and carries the frame's code", async () => {
    const frame = `data: ${JSON.stringify({ error: { code: "REQUEST_UNCERTAIN", message: "provider went quiet" } })}\n\n`;
    const err = await incomplete(readChatStream(whole(chunk("partial") + frame + DONE)));
    expect(err).toBeInstanceOf(IncompleteStreamError);
    expect(err).toMatchObject({ code: "REQUEST_UNCERTAIN", outcome: "uncertain", partialContent: "partial" });
    expect(err.message).toContain("provider went quiet");
  });

  it("[DONE] without any chunk, and a frame that is not JSON, are incomplete", async () => {
    await expect(readChatStream(whole(DONE))).rejects.toBeInstanceOf(IncompleteStreamError);
    await expect(readChatStream(whole(`${chunk("a")}data: {oops\n\n${DONE}`))).rejects.toBeInstanceOf(
      IncompleteStreamError,
    );
  });
});

describe("chat streams through the client", () => {
  const { bytes } = buildChatBody({
    model: "text-1",
    stream: true,
    messages: [{ role: "user", content: "hi" }],
  });
  const route = `${BASE}/api/generate/text/v1/chat/completions`;
  const sse = (body: ReadableStream<Uint8Array>) =>
    new HttpResponse(body, { headers: { "content-type": "text/event-stream" } });

  it("decodes a stream split mid-frame by the network", async () => {
    const text = chunk("Hello") + chunk(" there") + final + DONE;
    server.use(http.post(route, () => sse(pieces(text, [7, 33, 70, 90]))));
    const r = await client().chat(bytes, "s-1");
    expect(r).toMatchObject({ content: "Hello there", finishReason: "stop", streamed: true });
  });

  it("a 200 stream that ends early is incomplete, not success and not definitive", async () => {
    server.use(http.post(route, () => sse(whole(chunk("Hel")))));
    const err = await incomplete(client().chat(bytes, "s-2"));
    expect(err).toBeInstanceOf(IncompleteStreamError);
    expect(err).toMatchObject({ outcome: "uncertain", partialContent: "Hel" });
  });

  it("a stream that stalls is incomplete once the silence outlasts the timeout", async () => {
    let pulls = 0;
    const stalled = new ReadableStream<Uint8Array>({
      async pull(c) {
        pulls++;
        if (pulls <= 3) {
          // Each chunk arrives inside the timeout, so the silence timer is re-armed.
          await new Promise((r) => setTimeout(r, 40));
          c.enqueue(enc.encode(chunk(`p${pulls} `)));
          return;
        }
        await delay("infinite");
      },
    });
    server.use(http.post(route, () => sse(stalled)));
    // Fake time: the chunks 40 ms apart re-arm the 100 ms silence timer however loaded the machine.
    useFakeTime();
    const c = new ServiceClient({ baseUrl: BASE, apiKey: KEY, timeoutMs: 100 });
    const err = await drive(incomplete(c.chat(bytes, "s-3"))).finally(() => vi.useRealTimers());
    expect(err).toBeInstanceOf(IncompleteStreamError);
    expect(err.partialContent).toBe("p1 p2 p3 ");
    expect(err.message).toMatch(/timed out/);
  });

  it("the caller's abort mid-stream passes through as an abort", async () => {
    const hanging = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode(chunk("a")));
      },
    });
    server.use(http.post(route, () => sse(hanging)));
    const ctl = new AbortController();
    const p = client().chat(bytes, "s-4", { signal: ctl.signal, onDelta: () => ctl.abort() });
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).not.toBeInstanceOf(ServiceError);
    expect((err as Error).name).toBe("AbortError");
  });
});

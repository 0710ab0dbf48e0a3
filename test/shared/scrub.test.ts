import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { summarize } from "../../src/ledger/error-summary.js";
import { keyScrubber, mayQuoteKey, REDACTED, scrubDeep, scrubKeyShapes } from "../../src/shared/scrub.js";

const HEX = randomBytes(32).toString("hex");
const KEY = `lgk_${HEX}`;
const scrub = keyScrubber(KEY);

/** Any 12 characters of the key's digits, in any case. */
const leaks = (text: string): boolean => {
  const lower = text.toLowerCase();
  for (let i = 0; i + 12 <= HEX.length; i++) if (lower.includes(HEX.slice(i, i + 12))) return true;
  return false;
};

describe("keyScrubber", () => {
  const forms: Record<string, string> = {
    key: KEY,
    "bare hex": HEX,
    "upper-cased": KEY.toUpperCase(),
    "bare hex upper-cased": HEX.toUpperCase(),
    "mixed case": [...KEY].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join(""),
    "URL-encoded": encodeURIComponent(KEY),
    "percent-encoded byte by byte": [...Buffer.from(KEY)].map((b) => `%${b.toString(16)}`).join(""),
    "percent-encoded in part": KEY.replace("_", "%5F").replace(/a/g, "%61"),
    "hex of its bytes": Buffer.from(KEY).toString("hex"),
    "hex of its bytes, upper-cased": Buffer.from(KEY).toString("hex").toUpperCase(),
    "hex of its digits' bytes": Buffer.from(HEX).toString("hex"),
    "hex of its bytes, spaced": [...Buffer.from(KEY)].map((b) => b.toString(16)).join(" "),
    "hex of its bytes, colon-separated": [...Buffer.from(KEY)].map((b) => b.toString(16)).join(":"),
    dashed: `lgk_${HEX.match(/.{8}/g)?.join("-")}`,
    "dashed like a UUID": `${HEX.slice(0, 8)}-${HEX.slice(8, 12)}-${HEX.slice(12, 16)}-${HEX.slice(16, 20)}-${HEX.slice(20)}`,
    spaced: [...KEY].join(" "),
    "spaced in groups": HEX.match(/.{4}/g)?.join(" ") ?? "",
  };
  for (const [name, form] of Object.entries(forms)) {
    it(`removes the key as its ${name}, inside other text`, () => {
      const out = scrub(`Key ${form} was refused; retry.`);
      expect(leaks(out)).toBe(false);
      expect(leaks(out.replace(/[^0-9a-f]/gi, ""))).toBe(false);
      expect(out).toContain(REDACTED);
      expect(out).toMatch(/^Key .* was refused; retry\.$/);
    });
  }

  it("finds every form inside a large text of other scripts, where one pass screens the text first", () => {
    // Non-ASCII neighbours (two-byte strings) and a long listing around the key: the screen must
    // still see the run, and a listing with neither run comes back as the same string.
    const listing = JSON.stringify(
      Array.from({ length: 400 }, (_, i) => ({ id: `model-${i}`, note: "é — ✓" })),
    );
    expect(scrub(listing)).toBe(listing);
    const b64 = Buffer.from(`ab${KEY}`).toString("base64");
    for (const form of [...Object.values(forms), b64])
      for (const around of ["é", "—", "✓ "]) {
        const out = scrub(`${listing}${around}${form}${around}${listing}`);
        expect(leaks(out), form).toBe(false);
        expect(out).toContain(REDACTED);
      }
  });

  it("removes the key's digits inside a longer run of hex digits, every time they occur", () => {
    const out = scrub(`a${"f".repeat(9)}${HEX.toUpperCase()}0123 then LGK_${HEX}${HEX} end`);
    expect(leaks(out)).toBe(false);
    expect(out).toBe(`a${"f".repeat(9)}${REDACTED}0123 then ${REDACTED}${REDACTED} end`);
    // Another 64-digit run, longer runs without the key, and short hex pass untouched.
    const other = "ab".repeat(40);
    expect(scrub(`${other} deadbeef`)).toBe(`${other} deadbeef`);
  });

  it("mayQuoteKey is true for every form of the key scrubbed, and false for an ordinary log line", () => {
    const forms = [KEY, HEX.toUpperCase(), `x${HEX}y`];
    for (const before of ["", "a", "ab", "Basic user:"])
      for (const secret of [KEY, HEX]) {
        const raw = Buffer.from(`${before}${secret}:tail`);
        forms.push(raw.toString("base64"), raw.toString("base64url"));
      }
    for (const form of forms) {
      expect(mayQuoteKey(`said ${form}.`), form).toBe(true);
      // Whatever mayQuoteKey passes over, the scrubber would have left alone.
      expect(scrub(`said ${form}.`)).not.toBe(`said ${form}.`);
    }
    const line =
      "generation-mcp: oauth: sign-in: client l_oYQkaGlCuBZve5XMkTebbQZvdJaiuwpMBxaLfCNyg connected to account ceda922d1364";
    expect(mayQuoteKey(line)).toBe(false);
    expect(scrub(line)).toBe(line);
  });

  it("removes base64 and base64url of the key or its digits, at every alignment inside a larger encoding", () => {
    for (const secret of [KEY, HEX]) {
      for (const before of ["", "a", "ab", "Basic user:", "xyz:"]) {
        const raw = Buffer.from(`${before}${secret}:tail`);
        for (const encoded of [raw.toString("base64"), raw.toString("base64url")]) {
          const out = scrub(`Authorization: Basic ${encoded}`);
          expect(out, `${before} ${encoded}`).toContain(REDACTED);
          // What is left cannot be decoded back into the key.
          const rest = out.replace(REDACTED, "");
          expect(Buffer.from(rest.slice(21), "base64").toString("latin1")).not.toContain(HEX.slice(0, 12));
        }
      }
    }
  });

  it("removes other keys by their shape in any case, and leaves hashes and ordinary text alone", () => {
    const other = `lgk_${randomBytes(32).toString("hex")}`;
    expect(scrubKeyShapes(`a ${other.toUpperCase()} b`)).toBe(`a lgk_${REDACTED} b`);
    expect(scrub(`a ${other} b`)).toBe(`a lgk_${REDACTED} b`);
    const hash = randomBytes(32).toString("hex");
    expect(scrub(`bodyHash ${hash}, task_123, 5 Gems`)).toBe(`bodyHash ${hash}, task_123, 5 Gems`);
  });

  it("scrubs every string of a result, keys included, but leaves media bytes whole", () => {
    const media = Buffer.from(`png…${KEY}`).toString("base64");
    const result = {
      content: [
        { type: "text", text: `INVALID_REQUEST: ${HEX.toUpperCase()}` },
        { type: "image", data: media, mimeType: "image/png" },
      ],
      structuredContent: { error: { message: KEY }, [KEY]: [1, true, null, `x${HEX}`] },
      _meta: { code: "X", note: KEY.toUpperCase() },
    };
    const out = scrubDeep(result, scrub);
    expect(leaks(JSON.stringify({ ...out, content: [out.content[0]] }))).toBe(false);
    expect(out.content[1]).toEqual(result.content[1]);
    expect(out.structuredContent).toEqual({
      error: { message: REDACTED },
      [REDACTED]: [1, true, null, `x${REDACTED}`],
    });
  });

  it("misses no spelling behind the pass that spares short texts the expressions, at any noise around it", () => {
    // The key's forms inside runs of what the pass counts through (digits, `%`, separators) and
    // what ends a run, so every form is tried at and around the 64 digits the pass asks for.
    const noise = "0aF%-:. gz_";
    const pick = (n: number) =>
      Array.from({ length: n }, () => noise[Math.floor(Math.random() * noise.length)]).join("");
    for (let i = 0; i < 300; i++) {
      for (const form of Object.values(forms)) {
        const out = scrub(`${pick(i % 70)}${form}${pick((i * 7) % 70)}`);
        expect(leaks(out.replace(/[^0-9a-f]/gi, ""))).toBe(false);
      }
    }
    // 63 digits, however joined, are no key of any shape and pass as they are.
    for (const text of [
      "a".repeat(63),
      "%41".repeat(21),
      [..."b".repeat(63)].join("-"),
      `lgk_${"c".repeat(63)}`,
    ])
      expect(scrub(text)).toBe(text);
    expect(scrub(`lgk_${"c".repeat(64)}`)).toBe(`lgk_${REDACTED}`);
  });

  it("scrubs a key behind JSON escapes and in a result too large for one scan; a clean result passes as is", () => {
    const escaped = { text: `"quoted"\n\u0001${KEY}\\` };
    expect(scrubDeep(escaped, scrub).text).toBe(`"quoted"\n\u0001${REDACTED}\\`);
    const large = {
      text: "x".repeat(70 * 1024),
      more: [{ note: `base64 ${Buffer.from(KEY).toString("base64")}` }],
    };
    expect(leaks(JSON.stringify(scrubDeep(large, scrub)))).toBe(false);
    const clean = {
      content: [{ type: "text", text: "task_123 queued, 5 Gems" }],
      structuredContent: { n: 1 },
    };
    expect(scrubDeep(clean, scrub)).toBe(clean);
    // Only what leads to a changed string is copied; the value given is never changed.
    const mixed = { kept: { note: "ok" }, list: ["fine", `key ${KEY}`] };
    const out = scrubDeep(mixed, scrub);
    expect(out.kept).toBe(mixed.kept);
    expect(out.list).toEqual(["fine", `key ${REDACTED}`]);
    expect(mixed.list[1]).toBe(`key ${KEY}`);
  });
});

describe("the ledger's error summaries", () => {
  it("store no form of the key: the caller's scrub first, then key shapes, then the bound", () => {
    const err = Object.assign(new Error(`refused ${HEX.toUpperCase()} ${"x".repeat(600)}`), {
      code: "INVALID_REQUEST",
      status: 422,
    });
    const summary = summarize(err, scrub);
    expect(leaks(JSON.stringify(summary))).toBe(false);
    expect(summary).toMatchObject({ code: "INVALID_REQUEST", status: 422 });
    expect(summary.message.startsWith(`refused ${REDACTED} x`)).toBe(true);
    // Without the caller's scrubber, anything shaped like a key still goes.
    expect(leaks(JSON.stringify(summarize(new Error(`bad ${KEY.toUpperCase()}`))))).toBe(false);
  });
});

/**
 * Removing an API key from text before it leaves the process or reaches the ledger. The service may
 * quote a request's key back in any message (an error, a task's failure), in any case, with or
 * without its `lgk_` prefix, or base64-encoded as in a Basic credential; every text we pass on is
 * scrubbed for the key in force in all of those forms, and for anything shaped like a key at all.
 */

export type Scrub = (text: string) => string;

export const REDACTED = "[redacted]";

/** Anything shaped like a key (docs/service.md#authentication), in any case: defence in depth. */
const ANY_KEY = /lgk_[0-9a-f]{64}/gi;

/** Scrubs anything shaped like a key; knows no key in particular. */
export const scrubKeyShapes: Scrub = (text) => text.replace(ANY_KEY, `lgk_${REDACTED}`);

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The parts of base64(…key…) that do not depend on what surrounds the key: for each of the three
 * alignments the key can start at, the characters encoded from the key's bytes alone. A
 * base64-encoded message that quotes the key contains one of them, whatever came before it.
 */
function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const encoded = padded.toString("base64");
    // Characters before this position carry filler bits; after the last whole group, unknown bits.
    const start = Math.ceil((offset * 4) / 3);
    const end = Math.floor((padded.length * 4) / 3);
    const core = encoded.slice(start, end);
    cores.push(core, core.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return [...new Set(cores)];
}

/** What may stand between two characters of a quoted key: a dash, a space, a colon, a dot, or nothing. */
const SEP = "[ \\-:.]?";

/** One character as written, or percent-encoded (any case). */
const charOrPercent = (c: string): string =>
  `(?:${escapeRegExp(c)}|%${c.charCodeAt(0).toString(16).padStart(2, "0")})`;

/**
 * The key as text, each character as itself or percent-encoded, with or without `lgk_`, and the
 * hex of its bytes (each byte optionally `%`-prefixed), each with or without a separator between
 * characters (bytes): dashed, spaced, colon-separated. Only for a key of an unexpected shape
 * (otherScrubber); a well-formed key is found by the shared expressions below.
 */
function spelledForms(digits: string): RegExp {
  const text = (s: string) => [...s].map(charOrPercent).join(SEP);
  const bytes = (s: string) =>
    [...Buffer.from(s, "utf8")].map((b) => `%?${b.toString(16).padStart(2, "0")}`).join(SEP);
  const asText = `(?:${text("lgk_")}${SEP})?${text(digits)}`;
  const asHex = `(?:${bytes("lgk_")}${SEP})?${bytes(digits)}`;
  return new RegExp(`${asHex}|${asText}`, "gi");
}

/**
 * Whether a text could quote any key in any form keyScrubber removes: each is a run of 64 hex
 * digits or, base64-encoded, of at least 84 base64 characters. A text with neither needs no
 * per-key scrub (engine.ts scrubs a log line for every key it keeps only when this says so).
 */
export const mayQuoteKey = (text: string): boolean => MAY_QUOTE.test(text) || SPELLED_ONE.test(text);
const MAY_QUOTE = /[0-9a-f]{64}|[A-Za-z0-9+/_-]{80,}/i;
const SPELLED_ONE = /(?:%[0-9a-f]{2}|[0-9a-f])(?:[ \-:.]?(?:%[0-9a-f]{2}|[0-9a-f])){63,}/i;

/** Runs of hex digits long enough to hold a key's digits (checked per run below). */
const HEX_RUN = /(?:lgk_)?[0-9a-f]{64,}/gi;

/**
 * A scrubber for one key: its 64 hex digits in any case, with or without `lgk_`, also dashed,
 * spaced, colon-separated or percent-encoded, the hex of its bytes, and base64 or base64url of
 * the key or of its digits alone. Then every key shape, whoever's. Plain string searches and one
 * shared expression, no expression per key: a server with thousands of users keeps one scrubber
 * per user's engine (src/transports/engine.ts), and a compiled expression per key cost about
 * 10 KiB and 0.1 ms each.
 */
export function keyScrubber(apiKey: string): Scrub {
  const given = apiKey.replace(/^lgk_/i, "");
  if (!/^[0-9a-f]{64}$/i.test(given)) return otherScrubber(given);
  const digits = given.toLowerCase();
  const encoded = [...base64Cores(`lgk_${given}`), ...base64Cores(given)].sort((a, b) => b.length - a.length);
  const shortest = encoded.at(-1)?.length ?? 0;
  // A run of hex digits (ASCII: lower-casing keeps its length) is searched for the key's digits.
  const hex = (run: string): string => {
    const lower = run.toLowerCase();
    let at = lower.indexOf(digits);
    if (at < 0) return run;
    let out = "";
    let from = 0;
    while (at >= 0) {
      // `lgk_` just before the digits goes with them, as the key's own prefix.
      const start = at >= 4 && lower.slice(at - 4, at) === "lgk_" ? at - 4 : at;
      out += run.slice(from, start) + REDACTED;
      from = at + digits.length;
      at = lower.indexOf(digits, from);
    }
    return out + run.slice(from);
  };
  // The hex of the digits' bytes, as a service echoing the key byte by byte would write it.
  const byteHex = Buffer.from(digits, "utf8").toString("hex");
  // A `%` just before the key takes two of its digits as one encoded character, so the run is
  // also read with every `%` dropped.
  const spelled = (run: string): string => {
    const joined = run.replace(SEPARATORS, "");
    const decoded = joined.replace(PERCENT, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
    const holds = (s: string) => s.includes(digits) || s.includes(byteHex);
    return holds(decoded.toLowerCase()) || holds(joined.replaceAll("%", "").toLowerCase()) ? REDACTED : run;
  };
  return (text) => {
    // Most texts hold no run a hex spelling could be in, nor a base64 run long enough to encode
    // the key: one pass over their char codes tells, and they are returned as they are.
    const seen = scan(text);
    if (seen >= 0 && seen < shortest) return text;
    const runs = seen < 0;
    let out = runs ? text.replace(HEX_RUN, hex) : text;
    // Dashed, spaced, colon-separated or percent-encoded spellings, and the hex of its bytes.
    if (runs) out = out.replace(SPELLED, spelled);
    if (longestRun(out, isBase64) >= shortest)
      for (const core of encoded) if (out.includes(core)) out = out.replaceAll(core, REDACTED);
    return runs || scan(out) < 0 ? scrubKeyShapes(out) : out;
  };
}

/** Whether `c` (a char code) is a hex digit, in either case. */
const isHex = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
/** `%`, and the separators SPELLED allows between a key's characters: space, `-`, `:`, `.`. */
const isJoiner = (c: number): boolean => c === 37 || c === 32 || c === 45 || c === 58 || c === 46;

/** base64 and base64url's alphabet: letters, digits, `+`, `/`, `-`, `_`. */
const isBase64 = (c: number): boolean =>
  (c >= 48 && c <= 57) ||
  (c >= 65 && c <= 90) ||
  (c >= 97 && c <= 122) ||
  c === 43 ||
  c === 47 ||
  c === 45 ||
  c === 95;

const HEX = 1;
const JOINER = 2;
const BASE64 = 4;
/** Each UTF-16 code unit's classes, looked up rather than compared: a table read per character. */
const CLASSES = new Uint8Array(65536);
for (let c = 0; c < 128; c++)
  CLASSES[c] = (isHex(c) ? HEX : 0) | (isJoiner(c) ? JOINER : 0) | (isBase64(c) ? BASE64 : 0);

/**
 * -1 as soon as a stretch of `text` made of hex digits, `%` and separators holds 64 hex digits,
 * else the length of its longest base64 run: one pass of char codes, where the expressions would
 * each scan every position. Every match of HEX_RUN, SPELLED and ANY_KEY is such a stretch (each of
 * its 64 or more units, a digit or `%` and two digits, holds a digit), so without one none of them
 * can match and they need not run; and a base64 spelling of the key needs a run at least as long
 * as its shortest core. Almost every text, a large listing included, holds neither.
 */
function scan(text: string): number {
  let digits = 0;
  let run = 0;
  let longest = 0;
  for (let i = 0; i < text.length; i++) {
    const k = CLASSES[text.charCodeAt(i)] as number;
    if (k & HEX) {
      if (++digits >= 64) return -1;
    } else if ((k & JOINER) === 0) digits = 0;
    run = k & BASE64 ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

/** The length of the longest stretch of `text` whose characters all pass `is`. */
function longestRun(text: string, is: (c: number) => boolean): number {
  let longest = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    run = is(text.charCodeAt(i)) ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

/**
 * A run of hex digits (or percent-encoded characters) at least a key's 64 long, each optionally
 * separated from the next by a dash, space, colon or dot: where the key may stand spelled out. One
 * shared expression; each run is then checked against the key's own digits with string searches.
 */
const SPELLED = /(?:%[0-9a-f]{2}|[0-9a-f])(?:[ \-:.]?(?:%[0-9a-f]{2}|[0-9a-f])){63,}/gi;
const SEPARATORS = /[ \-:.]/g;
const PERCENT = /%([0-9a-f]{2})/gi;

/** A key of another shape than `lgk_` and 64 hex digits (none is accepted; defence in depth). */
function otherScrubber(digits: string): Scrub {
  if (digits.length < 16) return scrubKeyShapes;
  const hex = spelledForms(digits);
  const encoded = [...base64Cores(`lgk_${digits}`), ...base64Cores(digits)].sort(
    (a, b) => b.length - a.length,
  );
  const b64 = new RegExp(encoded.map(escapeRegExp).join("|"), "g");
  return (text) => scrubKeyShapes(text.replace(hex, REDACTED).replace(b64, REDACTED));
}

/**
 * Scrubs every string in a JSON-like value (a tool result, resource contents), keys included,
 * except media bytes: `blob`, and `data` beside a `mimeType` (image and audio blocks). Each string
 * is screened in place (scan, one pass, no copy): a value that quotes no key, nearly every one, is
 * returned as it is, and only the objects and arrays on the way to a changed string are copied.
 */
export function scrubDeep<T>(value: T, scrub: Scrub): T {
  return walk(value, scrub) as T;
}

/** `value` scrubbed: the same value (by reference) when nothing in it changed. */
function walk(value: unknown, scrub: Scrub): unknown {
  if (typeof value === "string") return scrub(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = walk(value[i], scrub);
      if (v !== value[i]) out ??= value.slice();
      if (out !== undefined) out[i] = v;
    }
    return out ?? value;
  }
  const source = value as Record<string, unknown>;
  const media = "mimeType" in source;
  const keys = Object.keys(source);
  let out: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const v = source[k];
    // Media bytes (base64) are left whole: scrubbing them would break the file.
    const bytes = typeof v === "string" && (k === "blob" || (k === "data" && media));
    const key = scrub(k);
    const next = bytes ? v : walk(v, scrub);
    if (out === undefined && (key !== k || next !== v)) {
      // The first change: the entries before it, unchanged, are copied in their order.
      out = {};
      for (let j = 0; j < i; j++) out[keys[j] as string] = source[keys[j] as string];
    }
    if (out !== undefined) out[key] = next;
  }
  return out ?? value;
}

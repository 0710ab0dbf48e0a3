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
 * characters (bytes): dashed, spaced, colon-separated.
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
 * A scrubber for one key: its 64 hex digits in any case, with or without `lgk_`, percent-encoded
 * or not, dashed, spaced or plain; the hex of its bytes the same ways; and base64 or base64url of
 * the key or of its digits alone. Then every key shape, whoever's.
 */
export function keyScrubber(apiKey: string): Scrub {
  const digits = apiKey.replace(/^lgk_/i, "");
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
 * except media bytes: `blob`, and `data` beside a `mimeType` (image and audio blocks).
 */
export function scrubDeep<T>(value: T, scrub: Scrub): T {
  return quotesNoKey(value, scrub) ? value : (walk(value, scrub) as T);
}

/** Above this much JSON the walk, which skips media bytes, is the cheaper scan. */
const ONE_SCAN_MAX = 64 * 1024;

/**
 * Whether `value` certainly quotes no key, settled by one scan of its JSON rather than one per
 * string: every form a key is scrubbed in is letters, digits, `_`, `+`, `/`, `-`, `%`, `:`, `.` and
 * spaces, which JSON writes as they are, so a key in any string or property name is in the JSON whole. A match (even
 * one JSON's escapes made up, as in `\u0001`) leaves it to the walk.
 */
function quotesNoKey(value: unknown, scrub: Scrub): boolean {
  if (typeof value !== "object" || value === null) return false;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return false;
  }
  return json !== undefined && json.length <= ONE_SCAN_MAX && scrub(json) === json;
}

function walk(value: unknown, scrub: Scrub): unknown {
  if (typeof value === "string") return scrub(value);
  if (Array.isArray(value)) return value.map((v) => walk(v, scrub));
  if (value === null || typeof value !== "object") return value;
  const source = value as Record<string, unknown>;
  const media = "mimeType" in source;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(source)) {
    // Media bytes (base64) are left whole: scrubbing them would break the file.
    const bytes = typeof v === "string" && (k === "blob" || (k === "data" && media));
    out[scrub(k)] = bytes ? v : walk(v, scrub);
  }
  return out;
}

/**
 * Readers of single setting values. A refusal names the variable or flag and what is expected,
 * and never the value: a key is easily pasted into the wrong variable, and a URL may carry a
 * password. Bounds come from the modules that own them, never copied.
 */
import { delimiter, isAbsolute } from "node:path";
import { MAX_WAIT_SECONDS } from "./bounds.js";
import { type NumberRange, numberIn } from "./numbers.js";
import { LIMITS } from "./service-limits.js";
import { parseStoreUri, StoreUriError } from "./store-uri.js";

/**
 * node:fs as CommonJS: its ESM facade reads every export, and fs.ReadStream's getter then loads the
 * file streams, fs/promises and readline, some 1.5 ms of every start (Node 24) that reads no file
 * but through readFileSync. The same in start-warnings.ts and package-version.ts.
 */
const { readFileSync } = process.getBuiltinModule("node:fs");

/** A configuration the server refuses to start with; `message` is one line, safe to print. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }

  /** The lines to print, one per problem. */
  get lines(): string[] {
    return [this.message];
  }
}

/** Every problem of a configuration at once, so a user fixes them in one go, not one per run. */
export class ConfigErrors extends ConfigError {
  constructor(readonly problems: readonly ConfigError[]) {
    super(problems[0]?.field ?? "configuration", "");
    this.message = problems.map((p) => p.message).join("\n");
  }

  override get lines(): string[] {
    return this.problems.map((p) => p.message);
  }
}

/** A numeric setting within `range`, refused as numbers.ts says (a plain number is shown). */
function readNumber(value: string, field: string, range: NumberRange): number {
  const read = numberIn(value, range);
  if ("problem" in read) throw new ConfigError(field, read.problem);
  return read.value;
}

/** What a value is read into, given the name it came under (`GENERATION_X` or `--x`). */
export type Reader<T> = (value: string, field: string) => T;

/** A URL scheme short and plain enough to name in a message without revealing anything. */
const SHOWABLE_SCHEME = /^[a-z][a-z0-9+.-]{0,9}$/;
/**
 * An API key, or its bare hex, anywhere in a value (any case). Such a value would be printed or
 * sent somewhere (the base address at start, directories in tool results), so it is refused; a
 * directory really named with 64 hex digits can be allowed through its parent.
 */
const KEY_LIKE = /lgk_|[0-9a-f]{64}/i;
const PASTED_KEY =
  "appears to contain an API key ('lgk_' or 64 hex digits); the key goes in GENERATION_API_KEY";

/** Whether `text`, or its %-decoded form, matches: a key may arrive escaped in a URL. */
function holds(pattern: RegExp, text: string): boolean {
  if (pattern.test(text)) return true;
  try {
    return pattern.test(decodeURIComponent(text));
  } catch {
    return false;
  }
}

export const readTransport: Reader<"stdio" | "http"> = (value, field) => {
  if (value !== "stdio" && value !== "http") throw new ConfigError(field, "expected 'stdio' or 'http'");
  return value;
};

export const readHost: Reader<string> = (value, field) => {
  if (!/^(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:.]+|[A-Za-z0-9.-]+)$/.test(value)) {
    throw new ConfigError(field, "expected a host name or IP address, such as 127.0.0.1 or ::1");
  }
  // A bind failure names the host: 64 hex digits would pass as a host name and then be printed.
  if (KEY_LIKE.test(value)) throw new ConfigError(field, PASTED_KEY);
  // Accept [::1] as people write it in URLs; node's listen wants it bare.
  return value.startsWith("[") ? value.slice(1, -1) : value;
};

export const readPort: Reader<number> = (value, field) =>
  readNumber(value, field, {
    min: 0,
    max: 65_535,
    integer: true,
    expected: "expected an integer from 0 to 65535 (0 picks a free port)",
  });

export const readBaseUrl: Reader<string> = (value, field) => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // The URL parser's message quotes the input; say what a valid one looks like instead.
    throw new ConfigError(
      field,
      "expected an http(s) URL such as https://api.example.com (check the scheme, host and port)",
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    const scheme = url.protocol.slice(0, -1).toLowerCase();
    const named = SHOWABLE_SCHEME.test(scheme) ? `, not scheme '${scheme}'` : "";
    throw new ConfigError(field, `expected an http(s) URL${named}`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new ConfigError(field, "must not carry credentials; the key goes in GENERATION_API_KEY");
  }
  if (url.search !== "" || url.hash !== "") {
    throw new ConfigError(field, "expected a base address without query or fragment");
  }
  // The base address is printed at start and sent in every request line: no key may ride in it.
  if (holds(KEY_LIKE, url.href)) throw new ConfigError(field, PASTED_KEY);
  return url.href.replace(/\/+$/, "");
};

/** Comma-separated http(s) origins (a CDN serving signed output URLs); an entry is named by position. */
export const readOrigins: Reader<string[]> = (value, field) => {
  const entries = value
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "");
  return entries.map((entry, i) => {
    const at = `entry ${i + 1} of ${entries.length}`;
    if (KEY_LIKE.test(entry)) throw new ConfigError(field, `${at} ${PASTED_KEY}`);
    const url = URL.canParse(entry) ? new URL(entry) : undefined;
    const plain = url !== undefined && url.username === "" && url.password === "";
    if (!plain || (url.protocol !== "http:" && url.protocol !== "https:") || url.href !== `${url.origin}/`) {
      throw new ConfigError(field, `${at}: expected an http(s) origin such as https://cdn.example.com`);
    }
    return url.origin;
  });
};

export const readApiKey: Reader<string> = (value, field) => {
  if (!LIMITS.apiKeyPattern.test(value)) {
    throw new ConfigError(field, "expected 'lgk_' followed by 64 lowercase hex characters (value not shown)");
  }
  return value;
};

export const readStore: Reader<string> = (value, field) => {
  try {
    parseStoreUri(value);
  } catch (error) {
    if (error instanceof StoreUriError) throw new ConfigError(field, error.message);
    throw error;
  }
  return value;
};

export const readDirectories: Reader<string[]> = (value, field) => {
  const dirs = value.split(delimiter).filter((d) => d !== "");
  if (dirs.length === 0) {
    throw new ConfigError(field, `expected one or more directories separated by '${delimiter}'`);
  }
  const keyed = dirs.findIndex((dir) => KEY_LIKE.test(dir));
  if (keyed !== -1) {
    throw new ConfigError(field, `entry ${keyed + 1} of ${dirs.length} ${PASTED_KEY}`);
  }
  const relative = dirs.findIndex((dir) => !isAbsolute(dir));
  if (relative !== -1) {
    throw new ConfigError(
      field,
      `expected absolute directories separated by '${delimiter}'; entry ${relative + 1} of ${dirs.length} is relative`,
    );
  }
  return dirs;
};

export const readDirectory: Reader<string> = (value, field) => {
  if (KEY_LIKE.test(value)) throw new ConfigError(field, PASTED_KEY);
  if (!isAbsolute(value)) throw new ConfigError(field, "expected an absolute directory (value not shown)");
  return value;
};

export const readGems: Reader<number> = (value, field) => {
  const max = LIMITS.mediaMaxGems;
  return readNumber(value, field, {
    min: 0,
    max,
    integer: true,
    expected: `expected an integer from 0 to ${max}`,
  });
};

export const readModelId: Reader<string> = (value, field) => {
  const { min, max } = LIMITS.modelId;
  if (value.length < min || value.length > max || /\s/.test(value)) {
    throw new ConfigError(field, `expected a model ID of ${min} to ${max} characters without spaces`);
  }
  if (KEY_LIKE.test(value)) throw new ConfigError(field, PASTED_KEY);
  return value;
};

export const readWaitSeconds: Reader<number> = (value, field) =>
  readNumber(value, field, {
    min: 0,
    max: MAX_WAIT_SECONDS,
    integer: false,
    expected: `expected seconds from 0 to ${MAX_WAIT_SECONDS}`,
  });

export const readAuth: Reader<"key" | "oauth"> = (value, field) => {
  if (value !== "key" && value !== "oauth") throw new ConfigError(field, "expected 'key' or 'oauth'");
  return value;
};

/** Loopback hosts, where plain http is acceptable for a public URL (testing on one machine). */
const LOOPBACK_URL_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * The URL users reach (`https://host`, or `https://host/mcp` as they paste it): its origin is the
 * OAuth issuer, and `<origin>/mcp` the protected resource. Plain http only on loopback.
 */
export const readPublicUrl: Reader<string> = (value, field) => {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new ConfigError(field, "expected the https URL users reach, such as https://mcp.example.com");
  }
  if (url.protocol === "http:" && !LOOPBACK_URL_HOST.test(url.hostname)) {
    throw new ConfigError(
      field,
      "must be https (plain http is allowed only on loopback, for testing): OAuth tokens and service keys cross it",
    );
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    throw new ConfigError(field, "expected a URL without credentials, query or fragment");
  }
  if (url.pathname !== "/" && url.pathname !== "/mcp") {
    throw new ConfigError(field, "expected the server's origin (https://host[:port]) or its /mcp endpoint");
  }
  if (holds(KEY_LIKE, url.href)) throw new ConfigError(field, PASTED_KEY);
  return url.origin;
};

/** 32 bytes: one AES-256 key's worth of randomness. */
export const MIN_AUTH_SECRET_BYTES = 32;

/**
 * One or more secrets, comma-separated, each base64 of at least 32 random bytes: the first
 * encrypts, every one decrypts (rotation: put the new one first). Named by position, never shown.
 */
export const readAuthSecret: Reader<string[]> = (value, field) => {
  const entries = value
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "");
  if (entries.length === 0) throw new ConfigError(field, "expected a base64 secret (value not shown)");
  entries.forEach((entry, i) => {
    const ok =
      /^[A-Za-z0-9+/_-]+={0,2}$/.test(entry) && Buffer.from(entry, "base64").length >= MIN_AUTH_SECRET_BYTES;
    if (!ok) {
      throw new ConfigError(
        field,
        `entry ${i + 1} of ${entries.length}: expected base64 of at least ${MIN_AUTH_SECRET_BYTES} random bytes, e.g. from 'openssl rand -base64 32' (value not shown)`,
      );
    }
  });
  return entries;
};

/** The same secrets, read from a file (a mounted secret); one per line or comma-separated. */
export const readAuthSecretFile: Reader<string[]> = (value, field) => {
  if (!isAbsolute(value)) throw new ConfigError(field, "expected an absolute file path");
  let text: string;
  try {
    text = readFileSync(value, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw new ConfigError(field, `the file cannot be read (${code})`);
  }
  return readAuthSecret(text.split(/\r?\n/).join(","), field);
};

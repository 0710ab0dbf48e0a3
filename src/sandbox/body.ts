/** Reading request bodies with a byte limit, and the canonical JSON used to compare replays. */
import { ArgumentError } from "../shared/local-refusals.js";
import { byteSize } from "../shared/wording.js";
import { Refusal, tooLarge } from "./sandbox-errors.js";

export async function readBody(req: Request, maxBytes: number, what: string): Promise<Uint8Array> {
  const declared = Number(req.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw tooLarge(`${what} is ${byteSize(declared)}; the limit is ${byteSize(maxBytes)}.`);
  }
  if (!req.body) return new Uint8Array(0);
  const parts: Uint8Array[] = [];
  let total = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(`${what} exceeds the limit of ${maxBytes} bytes.`);
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
}

export async function readJson(req: Request, maxBytes: number, what = "The request body"): Promise<unknown> {
  const type = req.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) {
    throw new Refusal(400, "INVALID_REQUEST", "Content-Type must be application/json.");
  }
  const bytes = await readBody(req, maxBytes, what);
  try {
    return JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    throw new Refusal(400, "INVALID_REQUEST", "The request body is not valid JSON.");
  }
}

/** JSON with object keys sorted at every level: equal requests give equal strings. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Runs a shared-schema parse and answers 422 INVALID_REQUEST naming the field. */
export function validated<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof ArgumentError) throw new Refusal(422, "INVALID_REQUEST", e.message);
    throw e;
  }
}

/**
 * `parseOrThrow`: a zod parse whose failure is an ArgumentError naming every failing field and
 * its limit in words, for the tools' arguments (src/mcp/define-tool.ts) and the service's request
 * bodies (schemas.ts). Apart from the schemas so that checking a tool's arguments does not build
 * them all.
 */
import type { z } from "zod";
import { ArgumentError, allArgumentErrors } from "../shared/local-refusals.js";

function fieldName(root: string, path: ReadonlyArray<PropertyKey>): string {
  let out = root;
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || "(input)";
}

/** 30000 as people write it, 30,000 (by hand: loading Intl for it would slow a cold start). */
const grouped = (n: number): string =>
  Number.isInteger(n) && Math.abs(n) >= 10_000 ? String(n).replace(/\B(?=(\d{3})+$)/g, ",") : String(n);

/**
 * A bound's issue as a person reads it ("must be at most 30,000 characters"), in place of zod's
 * default ("Too big: expected string to have <=30000 characters"); a message a schema wrote itself
 * (a limit in MiB, say) is kept.
 */
function boundWords(issue: z.core.$ZodIssue): string {
  if (!/^Too (big|small):/.test(issue.message)) return issue.message;
  if (issue.code !== "too_big" && issue.code !== "too_small") return issue.message;
  const big = issue.code === "too_big";
  const limit = Number(big ? issue.maximum : issue.minimum);
  const exact = issue.inclusive !== false;
  const bound = big ? (exact ? "at most" : "less than") : exact ? "at least" : "more than";
  const unit = (one: string) => `${grouped(limit)} ${limit === 1 ? one : `${one}s`}`;
  if (issue.origin === "string") return `must be ${bound} ${unit("character")}`;
  if (issue.origin === "array") return `must have ${bound} ${unit("item")}`;
  if (issue.origin === "number" || issue.origin === "int") return `must be ${bound} ${grouped(limit)}`;
  return issue.message;
}

/** Each issue of a failed parse as an ArgumentError naming its field and limit, in zod's order. */
export function argumentErrors(error: z.ZodError, root = ""): ArgumentError[] {
  return error.issues.map((issue) =>
    issue.code === "unrecognized_keys"
      ? new ArgumentError(
          fieldName(root, issue.path),
          `unknown field(s) ${issue.keys.join(", ")}: not accepted by the service`,
        )
      : new ArgumentError(fieldName(root, issue.path), boundWords(issue)),
  );
}

/** Parses or throws one ArgumentError naming every failing field and its limit. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, root = ""): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw allArgumentErrors(argumentErrors(result.error, root));
}

/**
 * Parses, or gives every failing field's ArgumentError at once (`root` prefixes their names:
 * "items[3].arguments"), for a call that reports all its errors in one answer (generate_batch).
 */
export function parseAll<S extends z.ZodType>(
  schema: S,
  value: unknown,
  root: string,
): { data: z.output<S> } | { errors: ArgumentError[] } {
  const result = schema.safeParse(value);
  if (result.success) return { data: result.data };
  const errors = argumentErrors(result.error, root);
  return { errors: errors.length > 0 ? errors : [new ArgumentError(root, "is invalid")] };
}

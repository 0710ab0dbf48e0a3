/**
 * Refusals and response helpers. Every error the sandbox answers goes through `errorResponse`,
 * so the envelope is always exactly `{error: {message, code?}}` (docs/service.md#responses).
 */
export class Refusal extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly headers: Record<string, string>;
  constructor(
    status: number,
    code: string | undefined,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/** Thrown by the core to say "drop the connection now"; the adapters turn it into a reset. */
export class ConnectionReset extends Error {
  constructor() {
    super("sandbox fault: connection reset after the work was recorded");
  }
}

export const invalid = (message: string): Refusal => new Refusal(422, "INVALID_REQUEST", message);
export const invalidReference = (message: string): Refusal => new Refusal(422, "INVALID_REFERENCE", message);
export const modelUnavailable = (message: string): Refusal => new Refusal(422, "MODEL_UNAVAILABLE", message);
export const tooLarge = (message: string): Refusal => new Refusal(413, undefined, message);
export const notFound = (message = "Not found."): Refusal => new Refusal(404, "NOT_FOUND", message);

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

export function errorResponse(
  status: number,
  message: string,
  code?: string,
  headers: Record<string, string> = {},
): Response {
  const error: { message: string; code?: string } = { message };
  if (code !== undefined) error.code = code;
  return json(status, { error }, headers);
}

export function refusalResponse(r: Refusal, method: string): Response {
  if (method === "HEAD") return new Response(null, { status: r.status, headers: r.headers });
  return errorResponse(r.status, r.message, r.code, r.headers);
}

/**
 * The nesting bound on a request's JSON (MAX_JSON_DEPTH in http-guard.ts), checked after the parse.
 * It names nothing outside itself: http-body-thread.ts sends its source to the parser's thread.
 */

/** Whether arrays and objects nest deeper than `max`; iterative, so it cannot overflow the stack. */
export function depthExceeds(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [node, depth] = top;
    if (node === null || typeof node !== "object") continue;
    if (depth > max) return true;
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}

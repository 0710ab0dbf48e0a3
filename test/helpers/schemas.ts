/** Checks of the JSON Schemas tools advertise, shared by unit tests and tests of the built CLI. */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A schema says what type its values have: `type` (one name), or branches that each do. */
function typed(schema: Json): boolean {
  if (typeof schema.type === "string" || Array.isArray(schema.type)) return true;
  for (const k of ["anyOf", "oneOf"] as const) {
    const branches = schema[k];
    if (Array.isArray(branches)) return branches.every((b) => isObject(b) && typed(b));
  }
  return false;
}

/**
 * What hosts that convert tool schemas for their models cannot take (the MCP Inspector's --strict
 * mode lists them as portability warnings): a `type` array, and a property with no type.
 */
export function portabilityProblems(schema: unknown, at: string): string[] {
  if (!isObject(schema)) return [];
  const out: string[] = [];
  if (Array.isArray(schema.type)) out.push(`${at}: type is an array ${JSON.stringify(schema.type)}`);
  for (const [name, sub] of Object.entries(isObject(schema.properties) ? schema.properties : {})) {
    if (isObject(sub) && !typed(sub)) out.push(`${at}.${name}: no type`);
    out.push(...portabilityProblems(sub, `${at}.${name}`));
  }
  for (const k of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    const list = schema[k];
    if (!Array.isArray(list)) continue;
    for (const [i, b] of list.entries()) out.push(...portabilityProblems(b, `${at}.${k}[${i}]`));
  }
  for (const k of ["items", "additionalProperties", "not", "contains"]) {
    out.push(...portabilityProblems(schema[k], `${at}.${k}`));
  }
  for (const k of ["$defs", "patternProperties"]) {
    const map = schema[k];
    if (isObject(map))
      for (const [n, sub] of Object.entries(map)) out.push(...portabilityProblems(sub, `${at}.${k}.${n}`));
  }
  return out;
}

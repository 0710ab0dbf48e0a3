/**
 * A tool's whole answer as one reviewable text, for the snapshots of test/tools/answer-snapshots.test.ts
 * (kept in test/tools/answers/): every content block in order, `isError`, and `structuredContent`
 * as JSON. What differs from run to run (IDs the sandbox mints, identities, times, signatures,
 * temporary paths) is replaced by a name for its kind, numbered by first appearance, so the same
 * ID reads the same throughout one answer.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";

const VOLATILE: [RegExp, string][] = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, "uuid"],
  [/\b[a-z]{2,10}(?:_[a-z]{2,10})*[_-][0-9a-f]{12,}\b/g, "id"],
  [/\b[a-z]{2,10}_[A-Za-z0-9]{8,}\b/g, "id"],
  [/\bgm[-_.:][A-Za-z0-9_.:-]{6,}\b/g, "identity"],
  [/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b/g, "time"],
  [/([?&](?:sig|signature|expires|exp|token)=)[^&\s"\\)]+/g, "sig"],
  [/\/tmp\/[^\s"'\\)]+/g, "path"],
];

export function formatAnswer(result: CallToolResult): string {
  const seen = new Map<string, string>();
  const counts = new Map<string, number>();
  const name = (kind: string, value: string): string => {
    let n = seen.get(value);
    if (n === undefined) {
      const i = (counts.get(kind) ?? 0) + 1;
      counts.set(kind, i);
      n = `<${kind}-${i}>`;
      seen.set(value, n);
    }
    return n;
  };
  const steady = (text: string): string =>
    VOLATILE.reduce(
      (t, [re, kind]) =>
        t.replace(re, (whole: string, prefix?: unknown) =>
          // A signature or expiry is named by its kind alone: two URLs signed in the same
          // millisecond share one, in another run they may not.
          typeof prefix === "string" && kind === "sig" ? `${prefix}<sig>` : name(kind, whole),
        ),
      text,
    );
  const parts: string[] = [`isError: ${result.isError === true}`];
  for (const block of result.content) {
    if (block.type === "text") parts.push(`--- text\n${block.text}`);
    else if (block.type === "resource_link")
      parts.push(`--- resource_link ${block.uri} (${block.mimeType ?? "?"})`);
    else if (block.type === "image" || block.type === "audio")
      parts.push(`--- ${block.type} ${block.mimeType}, ${Math.round((block.data.length * 3) / 4)} bytes`);
    else parts.push(`--- ${block.type}`);
  }
  if (result.structuredContent !== undefined)
    parts.push(`--- structuredContent\n${JSON.stringify(result.structuredContent, null, 2)}`);
  return `${steady(parts.join("\n"))}\n`;
}

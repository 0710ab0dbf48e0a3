/**
 * The files the docs give whole (HAProxy's configuration in docs/deploying.md and docs/oauth.md),
 * read from the Markdown when a test runs, so the tests run exactly what an operator pastes and
 * there is no second copy to drift: the fenced block right after `<!-- file: NAME -->`. Only the
 * placeholders the docs themselves name (ports, addresses, file paths) are replaced.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

/** The text of the block marked `<!-- file: name -->` in `doc` (a path from the repository's root). */
export function documentedFile(doc: string, name: string): string {
  const markdown = readFileSync(join(ROOT, doc), "utf8");
  const marker = `<!-- file: ${name} -->`;
  const at = markdown.indexOf(marker);
  if (at < 0) throw new Error(`${doc} has no block marked ${marker}`);
  if (markdown.indexOf(marker, at + marker.length) >= 0) throw new Error(`${doc} marks ${name} twice`);
  const block = /^\s*(`{3,})[^\n]*\n([\s\S]*?)\n\1[ \t]*$/m.exec(markdown.slice(at + marker.length));
  if (block?.index !== 0 || block[2] === undefined) {
    throw new Error(`${doc}: ${marker} is not followed by a fenced block`);
  }
  return `${block[2]}\n`;
}

/**
 * `text` with each placeholder replaced (every occurrence), all in one pass, so a value put in
 * (a port such as 44307) is never taken for another placeholder (`:443`). A placeholder the text
 * does not hold fails: the docs changed, and the test must be told rather than run something else.
 */
export function placed(text: string, places: ReadonlyArray<readonly [string, string]>): string {
  const values = new Map(places);
  for (const placeholder of values.keys()) {
    if (!text.includes(placeholder)) throw new Error(`the documented file no longer holds ${placeholder}`);
  }
  // Longest first, so that one placeholder inside another never wins.
  const alternatives = [...values.keys()].sort((x, y) => y.length - x.length).map(escaped);
  return text.replace(new RegExp(alternatives.join("|"), "g"), (found) => values.get(found) ?? found);
}

function escaped(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The viewer's page: one self-contained HTML file (script and styles inline, nothing fetched at
 * run time), built from src/viewer/app by `npm run build` (scripts/bundle.mjs), which writes it to
 * dist/viewer.html and inlines it in place of this module, so the package serves it from memory.
 * Run from source (tsx, tests), this reads the built file; test/globalSetup.ts rebuilds it whenever
 * a source is newer.
 */
import { readFile } from "node:fs/promises";

const BUILT = new URL("../../dist/viewer.html", import.meta.url);
let page: Promise<string> | undefined;

export function viewerHtml(): Promise<string> {
  page ??= readFile(BUILT, "utf8").catch((err: NodeJS.ErrnoException) => {
    page = undefined;
    throw new Error(
      `the media viewer's page is not built (${err.code ?? err.message} at dist/viewer.html): run npm run build`,
    );
  });
  return page;
}

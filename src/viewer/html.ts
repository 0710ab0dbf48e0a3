/**
 * The viewer's page: one self-contained HTML file (script and styles inline, nothing fetched at
 * run time). scripts/bundle.mjs replaces this module with the page built at build time, so the
 * package serves it from memory; run from source (tsx, tests), it is built here on first use.
 */
let built: Promise<string> | undefined;

export function viewerHtml(): Promise<string> {
  built ??= import("../../scripts/build-viewer.mjs").then((m) => m.buildViewerHtml());
  return built;
}

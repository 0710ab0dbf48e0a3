// Builds the media viewer (src/viewer/app, browser TypeScript) into ONE self-contained HTML page:
// the script and the styles inline, nothing fetched at run time (hosts render the view in a
// sandboxed frame whose CSP allows no outside scripts or fonts). `node scripts/build-viewer.mjs`
// writes dist/viewer.html to look at; scripts/bundle.mjs inlines the page into the server.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const APP = fileURLToPath(new URL("../src/viewer/app/", import.meta.url));

/**
 * package.json's version, inlined wherever the code names it (src/config/package-version.ts, the
 * viewer's appInfo): one source.
 */
export const VERSION_DEFINE = {
  GENERATION_MCP_VERSION: JSON.stringify(
    JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version,
  ),
};

export async function buildViewerHtml() {
  const result = await build({
    entryPoints: [`${APP}main.ts`],
    bundle: true,
    minify: true,
    format: "iife",
    platform: "browser",
    target: ["chrome111", "firefox111", "safari16.4"],
    write: false,
    legalComments: "none",
    define: VERSION_DEFINE,
    logLevel: "warning",
  });
  const js = result.outputFiles[0]?.text ?? "";
  const css = readFileSync(`${APP}style.css`, "utf8");
  const page = readFileSync(`${APP}index.html`, "utf8");
  // Inline, "</script" and "</style" would end the element early; escaped they mean the same.
  return page
    .replace("/*STYLE*/", () => css.replaceAll("</style", "<\\/style"))
    .replace("/*SCRIPT*/", () => js.replaceAll("</script", "<\\/script"));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const html = await buildViewerHtml();
  mkdirSync("dist", { recursive: true });
  writeFileSync("dist/viewer.html", html);
  process.stdout.write(`dist/viewer.html: ${Buffer.byteLength(html)} bytes\n`);
}

// Bundles the CLI straight from the TypeScript sources (tsc only type-checks): one ESM bundle (with chunks for what is loaded lazily) starts
// faster than hundreds of small modules (the SDK and zod alone are ~200 files), which is most
// of a cold start. The optional peers (pg, @redis/client) stay external: they are loaded only when
// installed beside the package. Source maps are off unless asked for (`npm run build -- --sourcemap`): they
// were 6.8 of the package's 11 MB unpacked, and hosts start the server without
// --enable-source-maps, so users' stack traces never used them; the bundle is unminified and
// keeps each module's source path in a comment, which is what a reader of a trace needs.
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { build } from "esbuild";
import { buildViewerHtml, VERSION_DEFINE } from "./build-viewer.mjs";

// Chunk names carry content hashes: start clean so stale chunks do not pile up.
rmSync("dist", { recursive: true, force: true });

// The media viewer's page, built once: written to dist/viewer.html (which src/viewer/html.ts reads
// when run from source) and inlined in place of html.ts in the bundle; surface/viewer.ts imports it
// lazily, so it sits in its own chunk.
const viewerHtml = await buildViewerHtml();
mkdirSync("dist", { recursive: true });
writeFileSync("dist/viewer.html", viewerHtml);
const inlineViewer = {
  name: "inline-viewer",
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]viewer[\\/]html\.ts$/ }, () => ({
      contents: `export const viewerHtml = () => Promise.resolve(${JSON.stringify(viewerHtml)});`,
      loader: "js",
    }));
  },
};

const REQUIRE_BANNER =
  "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);";

await build({
  entryPoints: ["src/cli.ts"],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  splitting: true,
  outdir: "dist/bundle",
  sourcemap: process.argv.includes("--sourcemap"),
  // pg and @redis/client are optional peers, installed beside the package by whoever uses them.
  external: ["pg", "@redis/client"],
  // Some bundled CommonJS dependencies call require() for Node's own modules.
  banner: { js: REQUIRE_BANNER },
  plugins: [inlineViewer],
  define: VERSION_DEFINE,
  logLevel: "warning",
});

// The banner stays only in the chunks that name `require` (esbuild's __require helper, bundled
// CommonJS): in the others it was a createRequire() for nothing, some 40 of them before tools/list
// is answered (about a millisecond of a cold start). Blanked rather than cut, so that a source
// map's lines still match.
for (const name of readdirSync("dist/bundle")) {
  if (!name.endsWith(".js")) continue;
  const file = `dist/bundle/${name}`;
  const text = readFileSync(file, "utf8");
  const body = text.slice(REQUIRE_BANNER.length);
  if (text.startsWith(REQUIRE_BANNER) && !/\brequire\b/.test(body)) writeFileSync(file, body);
}

// package.json's `bin` names `dist/cli.js`.
writeFileSync("dist/cli.js", '#!/usr/bin/env node\nimport "./bundle/cli.js";\n');
chmodSync("dist/cli.js", 0o755);

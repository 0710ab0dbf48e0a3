// The contract names `dist/cli.js` as the bin, while tsc mirrors the source tree
// (dist/src, dist/tools); this writes the one-line entry that bridges the two.
import { chmodSync, writeFileSync } from "node:fs";

writeFileSync("dist/cli.js", '#!/usr/bin/env node\nimport "./src/cli.js";\n');
chmodSync("dist/cli.js", 0o755);

// Bundles the SDK with esbuild:
//   src/snippet.ts → dist/herald.js     (page script, IIFE, served at /sdk/herald.js)
//   src/worker.ts  → dist/herald-sw.js  (classic worker script for importScripts, served at /sdk/herald-sw.js)
// Both are minified with external source maps and no dependencies. Types are
// checked separately (`tsc -p packages/sdk`), as esbuild only strips them.
import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));

// Current Chrome, Edge, Firefox and Safari (incl. iOS 16.4+, the first with web push).
const target = ['chrome109', 'edge109', 'firefox115', 'safari16.4'];

const bundles = [
  { entry: 'src/snippet.ts', outfile: 'dist/herald.js' },
  { entry: 'src/worker.ts', outfile: 'dist/herald-sw.js' },
];

for (const { entry, outfile } of bundles) {
  await build({
    entryPoints: [join(root, entry)],
    outfile: join(root, outfile),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target,
    minify: true,
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const bytes = readFileSync(join(root, outfile));
  console.log(`${outfile}: ${bytes.length} bytes, ${gzipSync(bytes).length} gzipped`);
}

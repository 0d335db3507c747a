// Bundles the server into dist/main.js (and the import reader thread into
// dist/subscriber-import-reader.js). Workspace packages (@herald/*) are
// bundled in; npm dependencies stay external and load from node_modules.
import { build } from 'esbuild';
import fs from 'node:fs';

const pkg = JSON.parse(fs.readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const external = Object.keys(pkg.dependencies ?? {}).filter((name) => !name.startsWith('@herald/'));

await build({
  // The import reader runs on a worker thread (features/subscriber-imports/checked-batches.ts): its own entry.
  entryPoints: { main: 'src/main.ts', 'subscriber-import-reader': 'src/features/subscriber-imports/reader-thread.ts' },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: true,
  external,
  // Some CommonJS dependencies call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __herald_createRequire } from 'node:module'; const require = __herald_createRequire(import.meta.url);" },
  logLevel: 'warning',
});

// Bundles src/editor.js into one ES module for the site (called by `cargo xtask` with the
// output folder). wgsl_check.js (the naga wasm module's glue) is written beside it by xtask,
// so it stays external and loads on first use.
import { build } from 'esbuild';

const outdir = process.argv[2];
if (!outdir) {
  console.error('usage: node build.mjs <outdir>');
  process.exit(2);
}
await build({
  entryPoints: ['src/editor.js'],
  bundle: true,
  format: 'esm',
  minify: true,
  target: 'es2020',
  outfile: `${outdir}/editor.js`,
  external: ['./wgsl_check.js'],
  legalComments: 'eof',
  logLevel: 'warning',
});

// Runs node:test files in the order given, N at a time: `node --test` sorts the files it is
// given by name (node 20), so `cargo xtask test`'s longest-first order (LONGEST_FILES in
// crates/xtask/src/test.rs) never reached it and the longest files started by name, some in
// the run's last minutes. node:test's run() keeps the order.
//
//   node run-files.mjs --concurrency 2 [--timeout MS] [--times FILE] FILE…
//
// The spec reporter writes to stdout (xtask counts its summary lines); with --times each
// top-level test's time is appended to FILE as it finishes (file-times.mjs). Ends the process
// once every file's tests have ended (a test that failed before stopping its own server must
// not keep the run waiting), and exits 1 if any test failed.
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { appendFileSync } from 'node:fs';
import fileTimes from './file-times.mjs';

const args = process.argv.slice(2);
const files = [];
let concurrency = 2;
let timeout = Infinity;
let times = null;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--concurrency') concurrency = Number(args[++i]);
  else if (a === '--timeout') timeout = Number(args[++i]);
  else if (a === '--times') times = args[++i];
  else files.push(a);
}
if (!files.length || !(concurrency >= 1) || !(timeout > 0)) {
  console.error('usage: node run-files.mjs --concurrency N [--timeout MS] [--times FILE] FILE…');
  process.exit(2);
}

const stream = run({ files, concurrency, timeout, forceExit: true });
// Any failure, a test's, a hook's or a whole file's (its limit, a crash), fails the run, as
// with `node --test`.
stream.on('test:fail', () => { process.exitCode = 1; });
if (times) {
  (async () => {
    for await (const line of stream.compose(fileTimes)) appendFileSync(times, line);
  })();
}
stream.compose(spec).pipe(process.stdout);

// A node:test reporter that writes how long each test file took, slowest first: the sum of its
// top-level tests' durations and the wall-clock span from its first event to its last (files
// run two at a time, so the spans overlap). `cargo xtask test` prints it after the browser
// step, so a slow file shows up in every run's log instead of being guessed at.
export default async function* fileTimes(source) {
  const files = new Map();
  for await (const e of source) {
    const file = e.data?.file;
    if (!file) continue;
    const now = Date.now();
    const f = files.get(file) ?? { first: now, last: now, tests: 0, ms: 0 };
    f.last = now;
    if ((e.type === 'test:pass' || e.type === 'test:fail') && e.data.nesting === 0) {
      f.tests += 1;
      f.ms += e.data.details?.duration_ms ?? 0;
    }
    files.set(file, f);
  }
  const rows = [...files].sort((a, b) => b[1].ms - a[1].ms);
  yield 'seconds in tests  wall span  tests  file\n';
  for (const [file, f] of rows) {
    const name = file.split('/').pop();
    yield `${(f.ms / 1000).toFixed(0).padStart(16)}  ${((f.last - f.first) / 1000).toFixed(0).padStart(9)}  ${String(f.tests).padStart(5)}  ${name}\n`;
  }
}

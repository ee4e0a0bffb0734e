// A node:test reporter that records how long each top-level test took, one line per test
// ("<ms>\t<file>\t<test name>") as it finishes: `cargo xtask test` runs node with
// --test-force-exit, which ends the process before a reporter that waits for the end of the
// stream could write (this one used to, and wrote nothing). xtask sums the lines per file and
// prints the files slowest first and the ten slowest tests after the browser step, so a slow
// file or test shows up in every run's log instead of being guessed at.
export default async function* fileTimes(source) {
  for await (const e of source) {
    const file = e.data?.file;
    if (!file || e.data.nesting !== 0) continue;
    if (e.type === 'test:pass' || e.type === 'test:fail') {
      // One line per test whatever its name holds.
      const name = String(e.data.name ?? '').replace(/\s+/g, ' ');
      yield `${Math.round(e.data.details?.duration_ms ?? 0)}\t${file.split('/').pop()}\t${name}\n`;
    }
  }
}

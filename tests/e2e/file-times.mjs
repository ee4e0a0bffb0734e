// A node:test reporter that records how long each top-level test took, one line per test
// ("<ms>\t<file>") as it finishes: `cargo xtask test` runs node with --test-force-exit, which
// ends the process before a reporter that waits for the end of the stream could write (this
// one used to, and wrote nothing). xtask sums the lines per file and prints them slowest first
// after the browser step, so a slow file shows up in every run's log instead of being guessed at.
export default async function* fileTimes(source) {
  for await (const e of source) {
    const file = e.data?.file;
    if (!file || e.data.nesting !== 0) continue;
    if (e.type === 'test:pass' || e.type === 'test:fail') {
      yield `${Math.round(e.data.details?.duration_ms ?? 0)}\t${file.split('/').pop()}\n`;
    }
  }
}

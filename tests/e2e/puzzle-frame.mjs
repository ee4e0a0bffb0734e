// A puzzle embedded in a frame, typed into as a learner would (helpers.mjs's setDoc works on a
// page; a frame has no keyboard of its own, so the page's types into the focused editor).
// Not a test file (node runs *.test.mjs).
import assert from 'node:assert/strict';

/** Replaces the frame's editor text and waits until naga has checked exactly this text. */
export async function setDocIn(page, frame, text) {
  await frame.click('.cm-content');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
  await frame.waitForFunction((t) => {
    const h = document.querySelector('.cm-host');
    return h?.editorText?.() === t && h.checkedText?.() === t;
  }, text, { timeout: 30_000 });
}

/** The puzzle's starter, as the frame's editor holds it, with its TODO line replaced by `line`. */
export async function starterAnswered(frame, line) {
  await frame.waitForSelector('.code-editor[data-ready="true"] .cm-content', { timeout: 60_000 });
  const lines = (await frame.$eval('.cm-host', (h) => h.editorText())).split('\n');
  const hole = lines.findIndex((l) => l.includes('TODO'));
  assert.ok(hole >= 0, `the starter has a TODO line: ${lines.join('\n')}`);
  lines[hole] = `    ${line}`;
  return lines.join('\n');
}

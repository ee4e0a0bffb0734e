// What the #/cnn browser tests wait on, kept once: the page's digits and GPU state, and both
// sides' last test evaluation.

/** Waits for the 10,000 test digits and for the GPU side to reach `gpu` (a `data-gpu` state). */
export async function ready(page, gpu = 'ready') {
  await page.waitForSelector('#cnn-data[data-images="10000"]', { timeout: 60_000 });
  await page.waitForSelector(`#cnn-status[data-gpu="${gpu}"]`, { timeout: 90_000 });
}

/** Waits until each of `sides`' last test evaluation is of step `n`. */
export async function evaluatedAt(page, n, sides = ['gpu', 'cpu']) {
  await page.waitForFunction(([n, sides]) => {
    const d = document.querySelector('#cnn-status')?.dataset ?? {};
    return sides.every((s) => d[`${s}Test`] !== undefined && Number(d[`${s}Test`].split(' ')[0]) === n);
  }, [n, sides], { timeout: 180_000, polling: 100 });
}

// What the page hands the GPU, watched at the WebGPU API: every `GPUQueue.submit` is counted
// with the number of earlier submissions not yet finished at that moment, and each one's
// completion is counted through `onSubmittedWorkDone`. Tests of Cancel assert with it that
// nothing is submitted after the cancel, nothing is left queued, and a later run starts only
// on an empty queue (so its timing excludes the cancelled run's work), instead of timing how
// long Cancel or the next run takes.

/**
 * Init script (pass as `openPage(…, { initScript: QUEUE_SPY })`). A completion callback is
 * registered right after the page's own submit, so it resolves before any callback the page
 * registers later for the same work: when the page sees its work done, so does the spy.
 */
export const QUEUE_SPY = () => {
  const spy = { submitted: 0, completed: 0, pendingAtSubmit: [] };
  window.__queueSpy = spy;
  const submit = GPUQueue.prototype.submit;
  GPUQueue.prototype.submit = function (...args) {
    spy.pendingAtSubmit.push(spy.submitted - spy.completed);
    spy.submitted += 1;
    const r = submit.apply(this, args);
    this.onSubmittedWorkDone().then(() => { spy.completed += 1; });
    return r;
  };
};

/** The spy's counts now: `{ submitted, completed, pendingAtSubmit }`. */
export const queueState = (page) => page.evaluate(() => ({
  submitted: window.__queueSpy.submitted,
  completed: window.__queueSpy.completed,
  pendingAtSubmit: [...window.__queueSpy.pendingAtSubmit],
}));

/**
 * Clicks `selector` with a DOM click (its handler runs at once, in this task) and returns the
 * submissions made before it: any submission counted later was made after the click.
 */
export const clickAndCount = (page, selector) => page.evaluate((s) => {
  document.querySelector(s).click();
  return window.__queueSpy.submitted;
}, selector);

/**
 * Waits until every submission so far has finished. The page submits its next chunk in the
 * same task as it learns the previous one finished, so a run still going (a Cancel ignored)
 * would have submitted again before this condition is next polled.
 */
export const queueDrained = (page, timeout = 120_000) => page.waitForFunction(
  () => window.__queueSpy.completed === window.__queueSpy.submitted, null, { timeout },
);

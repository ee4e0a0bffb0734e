// Browsers without WebGPU: the page explains what is missing and what still works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage, waitForProbe, screenshot, assertNoErrors } from './helpers.mjs';

test('without navigator.gpu the page explains and nothing panics', async () => {
  const browser = await launch();
  try {
    const { page, errors } = await openPage(browser, '#/kernels?lang=en', {
      initScript: () => { delete Navigator.prototype.gpu; },
    });
    assert.equal(await waitForProbe(page), 'unavailable');
    const panel = await page.textContent('.gpu-panel');
    assert.match(panel, /does not offer WebGPU/);
    assert.match(panel, /Without WebGPU you can still read every page/);
    assert.ok(await page.isDisabled('#run-button'));
    assert.match(await page.textContent('.run-widget'), /Running needs WebGPU/);
    await screenshot(page, 'no-webgpu-en');
    assertNoErrors(errors);
  } finally {
    await browser.close();
  }
});

test('with WebGPU but no adapter the page says why', async () => {
  const browser = await launch({ webgpu: false });
  try {
    const { page, errors } = await openPage(browser, '#/?lang=zh');
    const state = await waitForProbe(page);
    // Headless Chromium without --enable-unsafe-webgpu either hides the API or offers no adapter.
    assert.equal(state, 'unavailable');
    assert.match(await page.textContent('.gpu-panel'), /WebGPU 不可用/);
    await screenshot(page, 'no-adapter-zh');
    assertNoErrors(errors);
  } finally {
    await browser.close();
  }
});

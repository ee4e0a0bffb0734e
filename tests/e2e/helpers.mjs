// Shared helpers for the end-to-end tests: a headless Chromium with WebGPU (SwiftShader),
// a page that records console errors and requests, and screenshots into TEST_OUTPUT.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';

export const BASE_URL = process.env.BASE_URL ?? 'http://127.0.0.1:8080/';
const OUT = process.env.TEST_OUTPUT ?? 'test-output';
mkdirSync(OUT, { recursive: true });

const COMMON_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

/** Launches Chromium; `webgpu: false` leaves WebGPU off (no adapter is offered). */
export async function launch({ webgpu = true } = {}) {
  const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
  const args = webgpu ? [...COMMON_ARGS, '--enable-unsafe-webgpu'] : COMMON_ARGS;
  return chromium.launch({ executablePath, headless: true, args });
}

/**
 * Opens a page that records console errors, page errors and every request URL. `serviceWorkers:
 * 'block'` keeps the site's worker out, for a test that fails requests with `page.route`
 * (a request the worker answers from its cache never reaches the route).
 */
export async function openPage(browser, hashPath = '#/', { initScript, viewport, serviceWorkers } = {}) {
  const context = await browser.newContext({
    viewport: viewport ?? { width: 1280, height: 900 },
    ...(serviceWorkers ? { serviceWorkers } : {}),
  });
  const page = await context.newPage();
  if (initScript) await page.addInitScript(initScript);
  const errors = [];
  const requests = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console.error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('request', (req) => requests.push(req.url()));
  await page.goto(new URL(hashPath, BASE_URL).href);
  return { page, context, errors, requests };
}

/** Waits until the "Your GPU" panel has an answer (available or not). */
export async function waitForProbe(page) {
  await page.waitForSelector('[data-webgpu]', { timeout: 30_000 });
  return page.getAttribute('[data-webgpu]', 'data-webgpu');
}

export async function screenshot(page, name) {
  const path = join(OUT, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

export function assertNoErrors(errors) {
  assert.deepEqual(errors, [], `the page logged errors:\n${errors.join('\n')}`);
}

/** Every request went to the page's own origin (or was inline data). */
export function assertSameOrigin(requests) {
  const origin = new URL(BASE_URL).origin;
  const foreign = requests.filter((u) => !u.startsWith(origin + '/') && !u.startsWith('data:'));
  assert.deepEqual(foreign, [], `requests to other origins: ${foreign.join(', ')}`);
  assert.ok(requests.length > 0, 'no requests were recorded');
}

/** Clicks the Run widget's button and waits for this run's result (not the previous one's). */
export async function runAndWait(page) {
  const before = Number(await page.getAttribute('.result', 'data-runs'));
  await page.click('#run-button');
  await page.waitForFunction(
    (n) => Number(document.querySelector('.result')?.dataset.runs) > n, before, { timeout: 120_000 },
  );
}

/** Types an M×N×K size into the Run widget, runs it, and checks the result is verified. */
export async function runVerified(page, [m, n, k]) {
  await page.fill('#dim-m', String(m));
  await page.fill('#dim-n', String(n));
  await page.fill('#dim-k', String(k));
  await runAndWait(page);
  assert.equal(await page.getAttribute('.result [data-verified]', 'data-verified'), 'true');
}

/** Waits until the in-page code editor is mounted (and, with `runnable`, its Run button is enabled). */
export async function editorReady(page, { runnable = false } = {}) {
  await page.waitForSelector('.code-editor[data-ready="true"] .cm-content', { timeout: 60_000 });
  if (runnable) {
    await page.waitForSelector('.editor-actions .button.primary:not([disabled])', { timeout: 60_000 });
  }
}

/**
 * Replaces the editor's whole text as a user would: select all, delete, type. Delete first:
 * typing over a selection of highlighted text makes Chromium keep the highlight's colour as a
 * style attribute, which the strict CSP blocks (and logs). Then waits `settleMs` for naga's
 * debounced check, so Run sees the verdict on this text.
 */
export async function setDoc(page, text, { settleMs = 400 } = {}) {
  await page.click('.cm-content');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
  if (settleMs > 0) await page.waitForTimeout(settleMs);
}

// Shared set-up for the browser end-to-end tests: Debian's Chromium through playwright-core (TOOLCHAIN.md), a
// collector of console errors / failed requests, canvas pixel probes, and the artifacts folder for screenshots.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../../scripts/serve.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
export const ARTIFACTS = path.join(ROOT, 'tests', 'e2e', 'artifacts');
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Bundles present in models/ (a demo whose bundle is absent must say so instead of failing). */
export function hasBundle(name) {
  return existsSync(path.join(ROOT, 'models', name, 'config.json'));
}

/** Why the browser tests are skipped here ('' → false when they can run). */
export const BROWSER_SKIP = process.env.ATTNLENS_SKIP_BROWSER === '1' ? 'ATTNLENS_SKIP_BROWSER=1'
  : !existsSync(CHROMIUM) ? `${CHROMIUM} is missing (apt-get install chromium, or set CHROMIUM_PATH)` : false;

export const pipelineModule = (task) => path.join(ROOT, 'wasm', 'pipelines', `${task}.js`);
/** Whether this build ships the task's module and the model's bundle. */
export const available = (task, model) => existsSync(pipelineModule(task)) && hasBundle(model);

/** 404s the page may meet on purpose: bundles or task modules this build does not ship (for watchProblems). */
export function allowMissing(url) {
  const m = /\/models\/([^/]+)\//.exec(url);
  if (m) return !hasBundle(m[1]);
  const t = /\/wasm\/pipelines\/([a-z]+)\.js/.exec(url);
  return Boolean(t) && !existsSync(pipelineModule(t[1]));
}

export async function launch({ width = 1280, height = 900 } = {}) {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(path.join(os.tmpdir(), 'attnlens-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width, height },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Records console errors, page errors, failed requests and HTTP errors of `page` (and its workers). `allow(url)`
 * says which missing URLs are expected (a bundle this build does not ship: the page then says so).
 */
export function watchProblems(page, { allow = () => false } = {}) {
  const problems = [];
  const expected404 = (text, url) => /status of 404/.test(text) && allow(url ?? '');
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const url = msg.location()?.url;
    if (expected404(msg.text(), url)) return;
    problems.push(`console: ${msg.text()} (${url ?? ''})`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => {
    const f = req.failure()?.errorText ?? '';
    if (allow(req.url())) return; // a module script that 404s is reported as aborted
    if (/ERR_INTERNET_DISCONNECTED|ERR_ABORTED/.test(f) && page.__offline) return; // the offline check
    problems.push(`request failed: ${req.url()} ${f}`);
  });
  page.on('response', (res) => {
    if (res.status() >= 400 && !(res.status() === 404 && allow(res.url()))) problems.push(`HTTP ${res.status()}: ${res.url()}`);
  });
  page.on('worker', (w) => {
    w.on('console', (msg) => {
      if (msg.type() === 'error' && !expected404(msg.text(), msg.location()?.url)) problems.push(`worker console: ${msg.text()}`);
    });
  });
  return problems;
}

/**
 * Reports every Content-Security-Policy violation of `page`'s documents into `problems` (as 'CSP violation: …'). Call
 * it before page.goto. Violations inside the inference worker reach the page's console through client.js, which
 * watchProblems() records.
 */
export async function watchCsp(page, problems) {
  await page.exposeFunction('__attnlensReportCsp', (text) => problems.push(`CSP violation: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__attnlensReportCsp(`${e.effectiveDirective || e.violatedDirective} blocked ${e.blockedURI || '(inline)'} ` +
        `at ${e.sourceFile || '?'}:${e.lineNumber}`);
    });
  });
}

/**
 * Pixel statistics of a canvas. `ink`: pixels that are not near-white (labels included); `color`: saturated pixels
 * (max − min channel > 40), i.e. the attention drawing itself — heatmap cells, head-view lines — and not the grey
 * text of the labels; `hash` / `colorHash`: cheap hashes of all pixels / of the saturated ones only.
 */
/**
 * The usual start of a browser test file: the repository served on a free port, Chromium launched, and its first
 * page watched for console errors, failed requests and CSP violations (missing optional bundles allowed).
 */
export async function openPage({ width = 1280, height = 900, isolated = true } = {}) {
  const { server, url } = await serve(ROOT, { port: 0, isolated });
  const browser = await launch({ width, height });
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  const problems = watchProblems(page, { allow: allowMissing });
  await watchCsp(page, problems);
  return { server, url, browser, page, problems };
}

export function canvasProbe(page, selector, { bottom = 0 } = {}) {
  return page.$eval(selector, (c, skip) => {
    const h = Math.floor(c.height * (1 - skip)); // `bottom`: share of rows left out at the bottom (a caption strip)
    if (!c.width || !h) return { ink: 0, color: 0, hash: 0, colorHash: 0, width: 0 };
    const d = c.getContext('2d').getImageData(0, 0, c.width, h).data;
    let ink = 0;
    let color = 0;
    let hash = 2166136261;
    let colorHash = 2166136261;
    for (let i = 0; i < d.length; i += 4) {
      const [r, g, b, a] = [d[i], d[i + 1], d[i + 2], d[i + 3]];
      if (a > 0 && (r < 235 || g < 235 || b < 235)) ink++;
      const v = r + 3 * g + 7 * b + 11 * a;
      hash = Math.imul(hash ^ v, 16777619) >>> 0;
      if (a > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 40) {
        color++;
        colorHash = Math.imul(colorHash ^ (v + 31 * (i >> 2)), 16777619) >>> 0;
      }
    }
    return { ink, color, hash, colorHash, width: c.width };
  }, bottom);
}

/** In the page: whether the status line `status` says that its demo's run ended (a time, an error, a missing model). */
export const isDone = (status) => {
  const s = document.querySelector(status);
  return /\d ms$/.test(s.textContent.trim()) || s.classList.contains('error') || s.classList.contains('missing');
};
/** Waits for the run of the demo whose status line is `status` to end; fails when the line matches `fails`. */
export async function waitForRun(p, status, { timeout = 120_000, fails = /Error/ } = {}) {
  await p.waitForFunction(isDone, status, { timeout });
  const s = await p.$eval(status, (e) => e.textContent.trim());
  assert.doesNotMatch(s, fails, s);
  return s;
}

// The page of a browser test file, opened by usePage() in its before hook: live bindings that the test file imports
// (each test file runs in a process of its own).
export let server;
export let url;
export let browser;
export let page;
export let problems;

/**
 * A browser test file's set-up and tear-down: before its tests (unless `skip`), serve the repository, launch Chromium
 * at `width` × `height`, open `path(url)` (default: the page itself), wait for the page to be ready (unless `ready`
 * is false) and run `then()`; after them, close both.
 */
export function usePage({ skip = BROWSER_SKIP, width, height, path = (u) => u, ready = true, then } = {}) {
  before(async () => {
    if (skip) return;
    ({ server, url, browser, page, problems } = await openPage({ width, height }));
    await page.goto(path(url));
    if (ready) await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });
    await then?.();
  });
  after(async () => {
    if (browser) await browser.close();
    server?.close();
  });
}

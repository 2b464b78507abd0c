// The package loads and runs in a real browser, not only in Node: headless Debian Chromium (playwright-core, see
// TOOLCHAIN.md) opens the page served by scripts/serve.mjs, which imports the package's public entry. Fails on
// any console error or failed request, checks that the weights shown are a softmax of the catalogue's scores and
// that they change when a point is moved with the keyboard; saves a screenshot to out/page.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../../scripts/serve.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

test('the page runs the catalogue in headless Chromium', { timeout: 120_000 }, async (t) => {
  if (process.env.ATTNLENS_SKIP_BROWSER === '1') {
    t.skip('ATTNLENS_SKIP_BROWSER=1');
    return;
  }
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium (or set CHROMIUM_PATH)`);
  const { chromium } = await import('playwright-core');
  const { server, url } = await serve(ROOT.replace(/\/$/, ''), { port: 0 });
  const profile = mkdtempSync(path.join(os.tmpdir(), 'attnlens-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const problems = [];
    page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`console: ${msg.text()}`); });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()}`));
    page.on('response', (res) => { if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`); });

    await page.goto(url);
    await page.waitForFunction(() => /loaded/.test(document.getElementById('status').textContent), null, { timeout: 30_000 });
    assert.match(await page.textContent('#status'), /kernels: wasm-simd128/);

    const readWeights = () => page.$$eval('.mech', (boxes) => boxes.map((b) => ({
      title: b.querySelector('h3').textContent,
      weights: [...b.querySelectorAll('.num')].map((n) => Number(n.textContent)),
    })));
    const before = await readWeights();
    assert.equal(before.length, 5);
    for (const m of before) {
      assert.equal(m.weights.length, 5, m.title);
      const sum = m.weights.reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - 1) < 0.01, `${m.title}: weights sum to ${sum}`);
    }
    // The browser computed the same numbers as Node does for these points (the page's initial layout).
    const { init, attention, tensor } = await import('../../wasm/index.js');
    await init();
    const q = tensor([0.9, 0.5], [1, 2]);
    const keys = tensor([1.5, 0.2, 0.2, 1.4, -1.2, 0.6, -0.5, -1.3, 1.0, -1.1], [5, 2]);
    const expected = attention.alignSoft(attention.scoreDot({ q, keys })).weights.data;
    const dot = before.find((m) => m.title.startsWith('dot'));
    dot.weights.forEach((w, i) => assert.ok(Math.abs(w - expected[i]) < 1e-3, `dot weight ${i}: ${w} vs ${expected[i]}`));

    // Move the query with the keyboard: the weights must follow.
    await page.focus('#plane');
    for (let i = 0; i < 8; i++) await page.keyboard.press('ArrowLeft');
    const after = await readWeights();
    assert.notDeepEqual(after.find((m) => m.title.startsWith('dot')).weights, dot.weights);

    mkdirSync(path.join(ROOT, 'out'), { recursive: true });
    await page.screenshot({ path: path.join(ROOT, 'out', 'page.png'), fullPage: true });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
});

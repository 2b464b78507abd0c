// The pointer-network demo (web/pointer.js) end to end in headless Chromium: opened on the demo it sorts its example
// without a click; a person types numbers (commas, spaces, negatives, decimals, ties), and the shown list must equal
// a sort of them, the drawn pointer map (the weights the canvas publishes in data-weights, its dims and the marked
// order) must equal the 'pointer' map of the package's own result for the same input, computed by this test in the
// page's main thread (≤ 1e-6); the map's cursor reads a weight; bad input (empty, "abc", too many numbers) shows
// the package's error. Screenshot to tests/e2e/artifacts/pointer.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  ARTIFACTS, BROWSER_SKIP, available, canvasProbe, usePage, page, problems,
} from './helpers.mjs';

const skip = BROWSER_SKIP || (available('pointer', 'pointer-sort') ? false : 'pointer-sort bundle missing');

usePage({
  skip, path: (u) => `${u}?demo=pointer`, ready: false,
  then: () => page.evaluate(() => document.getElementById('pointer').scrollIntoView()),
});

/** Waits until the demo has answered `input` (a drawing or an error) and the button is enabled again. */
async function answered(input) {
  await page.waitForFunction((q) => document.getElementById('pointer').dataset.input === q &&
    !document.getElementById('ptr-run').disabled, input, { timeout: 120_000 });
}

/** The package's result in the page's main thread. */
function reference(input) {
  return page.evaluate(async (q) => {
    const { pipeline } = await import('/wasm/index.js');
    const sort = await pipeline('number-sorting', 'pointer-sort');
    const r = await sort(q);
    sort.dispose();
    const p = r.attentions.find((m) => m.name === 'pointer');
    return { values: r.values, sorted: r.sorted, order: r.order, sorted_ok: r.sorted_ok, dims: p.dims, data: Array.from(p.data) };
  }, input);
}

async function check(input) {
  const ref = await reference(input);
  const shown = await page.evaluate(() => {
    const c = document.getElementById('ptr-map');
    return { weights: JSON.parse(c.dataset.weights), dims: c.dataset.dims, order: c.dataset.order,
      sorted: document.getElementById('ptr-sorted').textContent, check: document.getElementById('ptr-check').textContent };
  });
  const numbers = input.split(/[\s,;]+/).filter(Boolean).map(Number);
  const want = [...numbers].sort((a, b) => a - b);
  assert.deepEqual(ref.sorted, want, `the model sorts ${input}`);
  assert.ok(ref.sorted_ok);
  assert.equal(shown.sorted, want.map((v) => String(Number(v.toPrecision(6)))).join(', '));
  assert.equal(shown.check, 'sorted');
  const n = numbers.length;
  assert.equal(shown.dims, `${n}x${n}`);
  assert.deepEqual(ref.dims, [n, n]);
  assert.equal(shown.order, ref.order.join(','));
  assert.equal(shown.weights.length, ref.data.length);
  for (let i = 0; i < ref.data.length; i++) {
    assert.ok(Math.abs(shown.weights[i] - ref.data[i]) <= 1e-6, `weight ${i}: drawn ${shown.weights[i]}, result ${ref.data[i]}`);
  }
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let j = 0; j < n; j++) sum += shown.weights[i * n + j];
    assert.ok(Math.abs(sum - 1) < 1e-4, `row ${i} sums to 1`);
  }
  assert.ok((await canvasProbe(page, '#ptr-map')).color > 200, 'the map has colour');
  return ref;
}

test('the demo sorts its example on first sight, and the drawing equals the result map', { skip }, async () => {
  const input = await page.$eval('#ptr-input', (e) => e.value);
  await answered(input);
  await check(input);
});

test('typed numbers: the shown list is their sort and the drawn map is the result map; the cursor of the map reads a weight', { skip }, async () => {
  for (const input of ['4 2 8 6', '0.5, -3, 12, 7.25, 7.25, 1e2, -0.5', '9 8 7 6 5 4 3 2 1 0']) {
    await page.fill('#ptr-input', input);
    await page.click('#ptr-run');
    await answered(input);
    await check(input);
  }
  // The cursor on the cell of output step 1 at the input position it chose (arrow keys; hovering a cell does the
  // same): the readout gives that weight.
  const ref = await reference('9 8 7 6 5 4 3 2 1 0');
  await page.focus('#ptr-map'); // keyboard cursor starts at step 1, input 1
  for (let k = 0; k < ref.order[0]; k++) await page.keyboard.press('ArrowRight');
  const readout = await page.$eval('#ptr-cursor', (e) => e.textContent);
  const w = ref.data[ref.order[0]];
  assert.match(readout, new RegExp(`weight ${w.toFixed(3).replace('.', '\\.')} \\(linked\\)$`), readout);
  await page.screenshot({ path: path.join(ARTIFACTS, 'pointer.png'), fullPage: false });
});

test('bad input shows the package error and the demo keeps working', { skip }, async () => {
  const cases = [
    ['', /empty input/],
    ['1 abc 3', /item 2 \("abc"\) is not a number/],
    [Array.from({ length: 51 }, (_, i) => i).join(' '), /too many numbers: got 51, this model sorts at most 50/],
  ];
  for (const [input, message] of cases) {
    await page.fill('#ptr-input', input);
    await page.click('#ptr-run');
    await answered(input);
    assert.match(await page.$eval('#ptr-status', (e) => e.textContent), message);
    assert.equal(await page.isVisible('#ptr-map'), false, 'no map for bad input');
  }
  await page.fill('#ptr-input', '3 1 2');
  await page.click('#ptr-run');
  await answered('3 1 2');
  await check('3 1 2');
  assert.deepEqual(problems, []);
});

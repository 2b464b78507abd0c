// The visual question answering demo (web/vqa.js) end to end in headless Chromium: the page opened on the demo
// answers its example without a click; a person types questions, picks another scene and the word level; for both
// models the drawn region overlay and word × region matrix (the weights each canvas publishes in data-weights) must
// equal the maps of the package's own result for the same scene and question, computed by this test in the page's
// main thread (≤ 1e-6), with the same answer shown; an empty question shows the engine's error. Screenshot to
// tests/e2e/artifacts/vqa.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  ARTIFACTS, BROWSER_SKIP, available, canvasProbe, usePage, page, problems,
} from './helpers.mjs';

const MODELS = ['shapes-vqa-coattn', 'shapes-vqa-aoa'];
const WORD_REGION = { 'shapes-vqa-coattn': 'affinity', 'shapes-vqa-aoa': 'aoa_alpha' };
const skip = BROWSER_SKIP || (MODELS.every((m) => available('vqa', m)) ? false : 'VQA bundles missing');

usePage({ skip, width: 1440, path: (u) => `${u}?demo=vqa`, ready: false });

/** Waits until both columns drew a result for `question` (or, without one, any result). */
async function answered(question) {
  await page.waitForFunction((q) => {
    const sec = document.getElementById('vqa');
    if (q !== null && sec.dataset.question !== q) return false;
    const cols = [...sec.querySelectorAll('.vqa-col')];
    return cols.length === 2 && cols.every((c) => c.querySelector('.vqa-overlay').dataset.weights &&
      c.querySelector('.vqa-matrix').dataset.weights && !document.getElementById('vqa-run').disabled);
  }, question, { timeout: 120_000 });
}

/** The package's result in the page's main thread for the example scene `src` and `question`. */
function reference(src, question) {
  return page.evaluate(async ([s, q, models]) => {
    const { pipeline } = await import('/wasm/index.js');
    const bitmap = await createImageBitmap(await (await fetch(`/web/${s}`)).blob());
    const c = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = c.getContext('2d');
    ctx.drawImage(bitmap, 0, 0);
    const img = ctx.getImageData(0, 0, bitmap.width, bitmap.height);
    const out = {};
    for (const m of models) {
      const vqa = await pipeline('visual-question-answering', m);
      const r = await vqa({ data: img.data, width: img.width, height: img.height }, q);
      out[m] = { answer: r.answer, score: r.score, tokens: r.tokens, where: Array.from(r.where),
        maps: r.attentions.map((a) => ({ name: a.name, layer: a.layer, dims: a.dims, data: Array.from(a.data) })) };
      vqa.dispose();
    }
    return out;
  }, [src, question, MODELS]);
}

function assertSame(drawn, want, label) {
  assert.equal(drawn.length, want.length, `${label}: number of weights`);
  for (let i = 0; i < want.length; i++) {
    assert.ok(Math.abs(drawn[i] - want[i]) <= 1e-6, `${label}[${i}]: drawn ${drawn[i]}, result ${want[i]}`);
  }
}

/** Everything both columns show equals the reference for (scene, question) at word × region level `layer`. */
async function check(src, question, layer) {
  const ref = await reference(src, question);
  for (const model of MODELS) {
    const col = `#vqa .vqa-col[data-model="${model}"]`;
    const shown = await page.$eval(col, (fig) => ({
      answer: fig.querySelector('.vqa-answer').textContent,
      overlay: JSON.parse(fig.querySelector('.vqa-overlay').dataset.weights),
      matrix: JSON.parse(fig.querySelector('.vqa-matrix').dataset.weights),
      map: fig.querySelector('.vqa-matrix').dataset.map,
      dims: fig.querySelector('.vqa-matrix').dataset.dims,
      where: fig.querySelector('.vqa-where').textContent,
    }));
    const r = ref[model];
    assert.ok(shown.answer.startsWith(`${r.answer} (${(100 * r.score).toFixed(1)}%)`), `${model}: answer ${shown.answer}`);
    // the relation readout's line states the result's `where` (dx, dy in grid cells)
    assert.equal(r.where.length, 2, `${model}: where`);
    const [dx, dy] = r.where;
    assert.ok(shown.where.includes(`${Math.abs(dx).toFixed(1)} cells ${dx < 0 ? 'left' : 'right'}`) &&
      shown.where.includes(`${Math.abs(dy).toFixed(1)} cells ${dy < 0 ? 'up' : 'down'}`), `${model}: ${shown.where}`);
    const region = r.maps.find((m) => m.name === 'region_attention' && m.layer === 1);
    assertSame(shown.overlay, region.data, `${model} region overlay`);
    const wr = r.maps.find((m) => m.name === WORD_REGION[model] && m.layer === layer);
    assert.equal(shown.map, `${WORD_REGION[model]}/${layer}`);
    assert.equal(shown.dims, `${r.tokens.length}x49`);
    assertSame(shown.matrix, wr.data, `${model} word x region`);
    assert.ok((await canvasProbe(page, `${col} .vqa-overlay`)).color > 500, `${model}: the overlay has colour`);
    assert.ok((await canvasProbe(page, `${col} .vqa-matrix`)).ink > 500, `${model}: the matrix has ink`);
  }
  return ref;
}

test('the demo answers its example on first sight, and the drawings equal the result maps', { skip }, async () => {
  await answered(null);
  const q = await page.$eval('#vqa-question', (e) => e.value);
  await check('examples/shapes-1.png', q, 1);
});

test('typed questions, another scene and the word level: drawings equal the result maps', { skip }, async () => {
  for (const question of ['how many triangles are there?', 'is the green object left of the blue object?']) {
    await page.fill('#vqa-question', question);
    await page.click('#vqa-run');
    await answered(question);
    await check('examples/shapes-1.png', question, 1);
  }
  await page.click('#vqa-examples .thumb[data-src="examples/shapes-2.png"]');
  await page.waitForFunction(() => document.getElementById('vqa').dataset.scene === 'examples/shapes-2.png', null,
    { timeout: 120_000 });
  const question = await page.$eval('#vqa-question', (e) => e.value);
  await answered(question);
  await page.selectOption('#vqa-kind', '0');
  const ref = await check('examples/shapes-2.png', question, 0);
  assert.ok(ref['shapes-vqa-coattn'].answer.length > 0);
  await page.$eval('#vqa-panels', (e) => e.scrollIntoView({ block: 'center' }));
  await page.screenshot({ path: path.join(ARTIFACTS, 'vqa.png'), fullPage: false });
  await page.selectOption('#vqa-kind', '1');
});

test('an empty question shows the engine error and the next question works', { skip }, async () => {
  await page.fill('#vqa-question', '   ');
  await page.click('#vqa-run');
  await page.waitForFunction(() => /the question is empty/.test(document.getElementById('vqa-status').textContent),
    null, { timeout: 60_000 });
  const question = 'what shape is the yellow object?';
  await page.fill('#vqa-question', question);
  await page.click('#vqa-run');
  await answered(question);
  await check(await page.$eval('#vqa', (e) => e.dataset.scene), question, 1);
  const left = problems.filter((p) => !/favicon/.test(p));
  assert.equal(left.length, 0, `console errors or failed requests: ${left.join(' | ')}`);
});

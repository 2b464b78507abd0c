// The page (web/) end to end in headless Chromium: each demo on a fixed input, the text or label it must produce,
// attention drawings that have ink and change when the input changes, the worker keeping the page responsive,
// keyboard use, phone width, an offline reload, and no console error anywhere. The page runs under the strict
// Content-Security-Policy that scripts/serve.mjs sends, and every test fails on a CSP violation; user text typed
// into the page is never markup; a worker that crashes, traps or hangs is restarted with a message. Screenshots go
// to tests/e2e/artifacts/ (the README shows copies of them).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { CSP } from '../../scripts/serve.mjs';
import {
  ROOT, ARTIFACTS, BROWSER_SKIP, hasBundle, available, allowMissing, pipelineModule, watchProblems, watchCsp,
  canvasProbe, openPage, usePage, server, url, browser, page, problems, isDone, waitForRun,
} from './helpers.mjs';

const skip = BROWSER_SKIP;

// Expected outputs come from the PyTorch goldens (the beam-4 outputs in models/de-en-transformer/golden.json, written
// by the recipe's make_goldens.py with the bundle's own decoding defaults) and the SST-2 labels of
// models/sst2-*/golden.json, never from the engine.
const goldenBeam4 = (de, model = 'de-en-general') => {
  const file = path.join(ROOT, 'models', model, 'golden.json');
  const g = JSON.parse(readFileSync(file, 'utf8'));
  const c = [...g.cases, ...(g.examples ?? [])].find((x) => x.source === de);
  if (!c) throw new Error(`no golden case for ${JSON.stringify(de)} in ${file}`);
  return c.beam4.text;
};
// The page's first sight: the default model (de-en-general) on its first example, an everyday sentence.
const FIRST = { de: 'Kannst du mir bitte helfen?', en: goldenBeam4('Kannst du mir bitte helfen?') };
// Tests that pick de-en-transformer in the form use its goldens.
const TRANSLATE = [
  'Zwei Kinder mit gelben Jacken spielen im Schlamm.',
  'Ein Mann in Blau fährt mit einem Fahrrad auf einer Piste.',
].map((de) => ({ de, en: goldenBeam4(de, 'de-en-transformer') }));
const SENTIMENT = [
  { text: "it 's a charming and often affecting journey .", label: 'POSITIVE', words: 9 },
  { text: 'unflinchingly bleak and desperate', label: 'NEGATIVE', words: 4 },
];
// One object of a shapes caption (models/training/captioning/shapes.py).
const SHAPES_OBJ = 'a( (small|large))? (red|green|blue|yellow|purple) (circle|square|triangle)';
// The links the page must draw: the package's own result for the same input in Node (the same WASM engine, the
// same defaults), not the page's.
const nodeTranslators = new Map();
async function reference(model, source, { target, num_beams = 4 } = {}) {
  if (!nodeTranslators.has(model)) {
    const { pipeline } = await import('../../wasm/index.js');
    nodeTranslators.set(model, await pipeline('translation', model));
  }
  const tr = nodeTranslators.get(model);
  return target === undefined ? tr(source, { num_beams }) : tr.align(source, target);
}
/** The link drawing `sel` has one line per link of `ref`, the same links, and ink. */
async function linksMatch(p, sel, ref) {
  const drawn = await p.$eval(sel, (c) => ({ n: Number(c.dataset.links), pairs: c.dataset.pairs }));
  assert.ok(ref.alignment.length > 0, 'the reference has links');
  assert.equal(drawn.n, ref.alignment.length, `${sel}: one line per link`);
  assert.equal(drawn.pairs, ref.alignment.map(([s, t]) => `${s}-${t}`).join(' '), `${sel}: the same links`);
  assert.ok((await canvasProbe(p, sel)).color > 300, `${sel}: the links drawing has ink`);
}

usePage({ skip, width: 1280 });
after(() => { for (const tr of nodeTranslators.values()) tr.dispose(); });

const shot = (name, target = page) => target.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: false });
const textOf = (sel) => page.$eval(sel, (e) => e.textContent.trim());

/** Submits a form and waits for its status line to leave the busy state; returns the status text. */
async function submit(formButton, status, timeout = 60_000) {
  await page.click(formButton);
  await page.waitForFunction((sel) => {
    const s = document.querySelector(sel);
    return s && !s.classList.contains('busy') && s.textContent.trim() !== '';
  }, status, { timeout });
  return textOf(status);
}

test('the page loads the WASM module and runs the attention lab', { skip }, async () => {
  assert.match(await textOf('#status'), /kernels: wasm-simd128/);
  // Served with COOP/COEP (scripts/serve.mjs): cross-origin isolated, so the models' worker runs the threaded module
  // with the machine's threads (up to 4); the lab, on the page's own thread, keeps the single-threaded one.
  assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), true);
  await page.waitForFunction(() => document.body.dataset.workerThreads !== undefined, null, { timeout: 30_000 });
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  assert.equal(Number(await page.evaluate(() => document.body.dataset.workerThreads)), Math.min(cores, 4));
  assert.match(await textOf('#status'), cores > 1 ? /kernels: wasm-simd128, \d threads\)/ : /one thread/);
  const boxes = await page.$$eval('.mech', (els) => els.map((b) => [...b.querySelectorAll('.num')].map((n) => Number(n.textContent))));
  assert.equal(boxes.length, 5, 'five score functions');
  for (const w of boxes) assert.ok(Math.abs(w.reduce((a, b) => a + b, 0) - 1) < 0.01, `softmax weights sum to 1: ${w}`);
  assert.equal(await page.$$eval('.mech-x', (els) => els.length), 3, 'local-p, hard vs soft, two heads');
  const plane = await canvasProbe(page, '#plane');
  assert.ok(plane.color > 500, 'the plane has coloured points and lines');
  const before = await page.$$eval('.mech .num, .mech-x .num', (n) => n.map((x) => x.textContent).join());
  await page.focus('#plane');
  for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowLeft');
  const after = await page.$$eval('.mech .num, .mech-x .num', (n) => n.map((x) => x.textContent).join());
  assert.notEqual(after, before, 'moving the query with the keyboard changes the weights');
  assert.notEqual((await canvasProbe(page, '#plane')).colorHash, plane.colorHash, 'and the drawing');
  // The local-p window follows its p slider.
  const localP = () => page.$$eval('.mech-x', (els) => els[0].querySelectorAll('.num')[2].textContent);
  const p0 = await localP();
  await page.$eval('.mech-x input[type=range]', (r) => { r.value = '0'; r.dispatchEvent(new Event('input')); });
  assert.notEqual(await localP(), p0, 'moving p moves the window');
  // The whole lab (all twenty mechanisms; tests/e2e/lab.test.mjs checks each panel) with the plane at its top, not
  // where it sticks while the panels scroll past it.
  await page.$eval('.plane-wrap', (e) => { e.style.position = 'static'; });
  await page.locator('#lab').screenshot({ path: path.join(ARTIFACTS, 'lab.png'), timeout: 90_000 });
  await page.$eval('.plane-wrap', (e) => { e.style.position = ''; });
});

// First sight: with no click, each model demo shows the result for its example input (app.js runs the translator at
// load, as it is on top, and the caption and sentiment demos when their section is first scrolled into view, one at a
// time). Each view says in one line what its colours mean.
const keyLine = (p, panel) => p.$eval(panel, (f) => {
  const k = f.querySelector('.key-line');
  return k && k.getClientRects().length ? k.textContent.trim() : '';
});

/** Waits for the three demos' automatic runs on `p`; screenshots `${name}.png` (top) and `${name}-<demo>.png`. */
async function checkFirstSight(p, name, { lazy = false } = {}) {
  const text = (sel) => p.$eval(sel, (e) => e.textContent.trim());
  const scrollTo = (sel) => p.$eval(sel, (e) => e.scrollIntoView({ block: 'start' }));

  const trStatus = await waitForRun(p, '#tr-status');
  if (!available('translation', 'de-en-general')) {
    assert.match(trStatus, /not available in this build/);
  } else {
    assert.equal(await p.$eval('#tr-input', (e) => e.value), FIRST.de, 'the first example, an everyday sentence');
    assert.equal(await text('#tr-output'), FIRST.en, 'its beam-4 translation, shown without a click');
    assert.ok((await canvasProbe(p, '#tr-heatmap')).color > 2000, 'the alignment heatmap has coloured cells');
    // Non-blank: the first example is a short everyday sentence (7 pieces), whose head view at 390 px has ~1,800
    // coloured pixels; a blank canvas has none.
    assert.ok((await canvasProbe(p, '#tr-headview')).color > 1000, 'the head view has coloured lines');
    assert.equal(await p.$eval('#tr-progress', (e) => e.value), 100, 'the progress bar went to 100');
    assert.match(await keyLine(p, '#tr-map-panel'),
      /^Darker cells: more attention from this English word \(row\) to that German word \(column\); orange dots: the links\.$/);
    assert.match(await keyLine(p, '#tr-links-panel'), /^Each line links a German word to the\s+English word the model aligned it with/);
    assert.ok(Number(await p.$eval('#tr-links', (c) => c.dataset.links)) > 0, 'the word links are drawn at load');
    assert.match(await keyLine(p, '#tr-heads-panel'), /colour per head/);
  }
  await p.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
  if (lazy) {
    // The demos below the fold have loaded nothing yet: their models download when they are first seen.
    assert.equal(await text('#st-label'), '', 'sentiment waits until it is scrolled to');
    assert.equal(await text('#cap-status'), '', 'caption waits until it is scrolled to');
  }

  await scrollTo('#caption');
  const capStatus = await waitForRun(p, '#cap-status');
  if (!available('captioning', 'shapes')) {
    assert.match(capStatus, /captioning model not available in this build/i);
  } else {
    // examples/shapes-1.png with the shapes model (see the caption test below for the scene and the grammar).
    assert.equal(await p.$eval('#cap-model', (e) => e.value), 'shapes');
    const caption = await text('#cap-output');
    assert.match(caption, new RegExp(`^${SHAPES_OBJ}( (left of|above|below) ${SHAPES_OBJ})*$`));
    assert.match(caption, /triangle/);
    assert.ok(await p.$$eval('#cap-words button', (b) => b.length) >= 3, 'one button per word');
    // It opens on the word with the most concentrated attention, not on "a".
    const selected = await p.$eval('#cap-words button[aria-pressed=true]', (b) => b.textContent);
    assert.notEqual(selected, 'a');
    assert.ok((await canvasProbe(p, '#cap-overlay', { bottom: 0.12 })).ink > 1000, 'the overlay has ink');
    assert.match(await keyLine(p, '#caption .panel'), /^Bright areas: where the model looked/);
  }
  await p.locator('#caption').screenshot({ path: path.join(ARTIFACTS, `${name}-caption.png`) });

  await scrollTo('#sentiment');
  const stStatus = await waitForRun(p, '#st-status');
  if (!available('sentiment', 'sst2-selfattn')) {
    assert.match(stStatus, /not available in this build/);
  } else {
    assert.equal(await text('#st-label'), SENTIMENT[0].label, 'the first example\'s label, without a click');
    const weights = await p.$$eval('#st-words span', (s) => s.map((x) => Number(x.dataset.weight)));
    assert.equal(weights.length, SENTIMENT[0].words);
    assert.ok(weights.some((w) => w > 0), 'words are shaded');
    assert.match(await keyLine(p, '#st-panels .panel:first-child'), /^Darker words: /);
  }
  await p.locator('#sentiment').screenshot({ path: path.join(ARTIFACTS, `${name}-sentiment.png`) });
}

test('first sight: each demo shows its example\'s result without a click, and what its colours mean', { skip }, async () => {
  await checkFirstSight(page, 'first-sight');
});

test('first sight at 1440 px and at 390 px: the same, models load only when seen, no horizontal scrolling', { skip }, async () => {
  for (const [width, height] of [[1440, 900], [390, 844]]) {
    const p = await browser.context.newPage();
    const pageProblems = watchProblems(p, { allow: allowMissing });
    await watchCsp(p, pageProblems);
    // Closed even when a check fails: a tab left open would put the main page in the background (rAF throttled to
    // 1 Hz, which the frame-gap check of the translate test would then see).
    try {
      await p.setViewportSize({ width, height });
      await p.goto(url);
      await checkFirstSight(p, `first-sight-${width}`, { lazy: true });
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `${width} px: the page is ${overflow}px wider than the window`);
      // Keyboard: the heatmap drawn at load takes focus and reads a weight with the arrow keys.
      if (available('translation', 'de-en-transformer')) {
        await p.focus('#tr-heatmap');
        await p.keyboard.press('ArrowDown');
        assert.match(await p.$eval('#tr-cursor', (e) => e.textContent), /weight \d\.\d{3}/);
      }
    } finally {
      await p.close();
    }
    assert.deepEqual(pageProblems, [], `${width} px`);
  }
});

test('sentiment: label, shaded words per hop, the relation matrix', { skip }, async (t) => {
  if (!existsSync(pipelineModule('sentiment'))) {
    const status = await submit('#st-run', '#st-status');
    assert.match(status, /not available in this build/);
    t.diagnostic('wasm/pipelines/sentiment.js is missing: checked the "not available" message only');
    return;
  }
  await page.selectOption('#st-model', 'sst2-selfattn');
  const shades = [];
  for (const c of SENTIMENT) {
    await page.fill('#st-input', c.text);
    const status = await submit('#st-run', '#st-status');
    assert.doesNotMatch(status, /Error|not available/, status);
    assert.equal(await textOf('#st-label'), c.label, c.text);
    // The download reported progress up to 100% (the bar hides itself afterwards).
    assert.equal(await page.$eval('#st-progress', (p) => p.value), 100, 'progress bar reached 100');
    const score = Number((await textOf('#st-score')).replace(/[^0-9.]/g, ''));
    assert.ok(score > 0.5 && score <= 1, `score ${score}`);
    const weights = await page.$$eval('#st-words span', (s) => s.map((x) => Number(x.dataset.weight)));
    assert.equal(weights.length, c.words, 'one shaded span per word');
    assert.ok(weights.some((w) => w > 0), 'some word has attention');
    shades.push(await page.$$eval('#st-words span', (s) => s.map((x) => x.style.background).join('|')));
    if (c === SENTIMENT[0]) await page.locator('#sentiment').screenshot({ path: path.join(ARTIFACTS, 'sentiment-selfattn.png') });
  }
  assert.notEqual(shades[0], shades[1], 'shading follows the input');
  // Hops: picking one hop shows a different shading than their mean.
  const hops = await page.$$eval('#st-hop option', (o) => o.map((x) => x.value));
  assert.ok(hops.length >= 3, `a mean and at least two hops: ${hops}`);
  const mean = await page.$$eval('#st-words span', (s) => s.map((x) => x.dataset.weight).join());
  await page.selectOption('#st-hop', hops[1]);
  assert.notEqual(await page.$$eval('#st-words span', (s) => s.map((x) => x.dataset.weight).join()), mean);

  if (!hasBundle('sst2-relation')) return;
  await page.selectOption('#st-model', 'sst2-relation');
  const probes = [];
  for (const c of SENTIMENT) {
    await page.fill('#st-input', c.text);
    const status = await submit('#st-run', '#st-status');
    assert.doesNotMatch(status, /Error|not available/, status);
    assert.equal(await textOf('#st-label'), c.label, `relation: ${c.text}`);
    assert.equal(await page.isVisible('#st-matrix'), true, 'the T×T matrix is shown');
    probes.push(await canvasProbe(page, '#st-matrix'));
    if (c === SENTIMENT[0]) await page.locator('#sentiment').screenshot({ path: path.join(ARTIFACTS, 'sentiment-relation.png') });
  }
  assert.ok(probes.every((p) => p.color > 1000), 'the matrix has coloured cells');
  assert.notEqual(probes[0].colorHash, probes[1].colorHash, 'the matrix changes with the input');
});

test('translate: the golden beam-4 translation, its alignment, the head view, comparison', { skip }, async (t) => {
  if (!available('translation', 'de-en-transformer')) {
    const status = await submit('#tr-run', '#tr-status');
    assert.match(status, /not available in this build/);
    t.diagnostic('the translation pipeline or bundle is missing: checked the "not available" message only');
    return;
  }
  await page.selectOption('#tr-model', 'de-en-transformer');
  await page.fill('#tr-beams', '4');
  const maps = [];
  const heads = [];
  for (const c of TRANSLATE) {
    await page.fill('#tr-input', c.de);
    // The model runs in the worker: the main thread keeps drawing frames meanwhile (no gap over 250 ms).
    await page.evaluate(() => {
      window.__gaps = { max: 0, last: performance.now(), on: true };
      const tick = (now) => {
        window.__gaps.max = Math.max(window.__gaps.max, now - window.__gaps.last);
        window.__gaps.last = now;
        if (window.__gaps.on) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    const status = await submit('#tr-run', '#tr-status', 90_000);
    const gap = await page.evaluate(() => { window.__gaps.on = false; return window.__gaps.max; });
    assert.doesNotMatch(status, /Error|not available/, status);
    assert.equal(await textOf('#tr-output'), c.en, c.de);
    assert.ok(gap < 250, `longest frame gap while translating: ${gap.toFixed(0)} ms`);
    maps.push(await canvasProbe(page, '#tr-heatmap'));
    assert.equal(await page.isVisible('#tr-headview'), true, 'the Transformer has a head view');
    heads.push(await canvasProbe(page, '#tr-headview'));
    if (c === TRANSLATE[0]) {
      // Hover a cell: the weight is reported and the pair highlighted.
      await page.locator('#tr-heatmap').scrollIntoViewIfNeeded();
      const box = await page.locator('#tr-heatmap').boundingBox();
      await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.7);
      assert.match(await textOf('#tr-cursor'), /weight \d\.\d{3}/);
      // The same by keyboard (it also keeps the highlight in place for the screenshot).
      await page.mouse.move(0, 0);
      await page.focus('#tr-heatmap');
      for (const k of ['ArrowDown', 'ArrowDown', 'ArrowDown', 'ArrowRight', 'ArrowRight', 'ArrowRight']) await page.keyboard.press(k);
      assert.match(await textOf('#tr-cursor'), /target “.+” → source “.+”: weight \d\.\d{3}/);

      // Word links: one line per link of the result, and a dot on the heatmap per link (word level by default).
      const ref = await reference('de-en-transformer', c.de);
      assert.equal(ref.text, c.en);
      await linksMatch(page, '#tr-links', ref);
      const wordDims = `${ref.target_words.length}x${ref.source_words.length}`;
      assert.equal(await page.$eval('#tr-heatmap', (e) => e.dataset.dims), wordDims, 'word level by default');
      assert.equal(await page.$eval('#tr-heatmap', (e) => Number(e.dataset.marks)), ref.alignment.length);
      // The toggle, by keyboard (a radio group): pieces, then words again.
      await page.focus('#tr-level input[value=word]');
      await page.keyboard.press('ArrowRight');
      assert.equal(await page.$eval('#tr-level input[value=piece]', (e) => e.checked), true);
      assert.equal(await page.$eval('#tr-heatmap', (e) => e.dataset.dims),
        `${ref.target_tokens.length}x${ref.source_tokens.length}`, 'pieces: one row per target piece');
      assert.match(await keyLine(page, '#tr-map-panel'), /English piece \(row\)/);
      await page.locator('#tr-map-panel').screenshot({ path: path.join(ARTIFACTS, 'translate-pieces.png') });
      assert.equal(await page.$eval('#tr-links', (e) => Number(e.dataset.links)), ref.alignment.length, 'the links stay');
      await page.keyboard.press('ArrowLeft');
      assert.equal(await page.$eval('#tr-heatmap', (e) => e.dataset.dims), wordDims, 'back to words');
      // The keyboard walks the words (along a sentence, across to the other one) and reads each word's links.
      const layout = await page.$eval('#tr-links', (c) => c.dataset.layout);
      assert.ok(['rows', 'columns'].includes(layout), layout);
      await page.focus('#tr-links');
      await page.keyboard.press(layout === 'rows' ? 'ArrowRight' : 'ArrowDown');
      assert.match(await textOf('#tr-links-cursor'), /^German “.+” ↔ (English “.+”|no link)/);
      const plain = (await canvasProbe(page, '#tr-links')).colorHash;
      await page.keyboard.press(layout === 'rows' ? 'ArrowDown' : 'ArrowRight');
      assert.match(await textOf('#tr-links-cursor'), /^English “.+” ↔ (German “.+”|no link)/);
      assert.notEqual((await canvasProbe(page, '#tr-links')).colorHash, plain, 'another word, other links highlighted');
      // Hovering a German word does the same (the heatmap keeps its keyboard cursor for the screenshot).
      await page.focus('#tr-heatmap');
      for (const k of ['ArrowDown', 'ArrowDown', 'ArrowDown', 'ArrowRight', 'ArrowRight', 'ArrowRight']) await page.keyboard.press(k);
      await page.locator('#tr-links').scrollIntoViewIfNeeded();
      const lb = await page.locator('#tr-links').boundingBox();
      await page.mouse.move(lb.x + (layout === 'rows' ? lb.width / 2 : 20), lb.y + 18);
      assert.match(await textOf('#tr-links-cursor'), /^German “.+” ↔ /);
      await page.locator('#translate').screenshot({ path: path.join(ARTIFACTS, 'translate.png') });
    }
  }
  assert.ok(maps.every((m) => m.color > 2000), 'the alignment has coloured cells');
  assert.notEqual(maps[0].colorHash, maps[1].colorHash, 'the alignment changes with the input');
  assert.ok(heads.every((m) => m.color > 2000), 'the head view has coloured lines');
  assert.notEqual(heads[0].colorHash, heads[1].colorHash, 'the head view changes with the input');

  // Keyboard: focus the heatmap, move the cursor.
  await page.focus('#tr-heatmap');
  await page.keyboard.press('ArrowRight');
  assert.match(await textOf('#tr-cursor'), /“.*” → source “.*”: weight/);

  // Head toggles and the layer selector change the head view.
  const h0 = (await canvasProbe(page, '#tr-headview')).colorHash;
  await page.click('#tr-heads button:nth-child(1)');
  assert.equal(await page.getAttribute('#tr-heads button:nth-child(1)', 'aria-pressed'), 'false');
  const h1 = (await canvasProbe(page, '#tr-headview')).colorHash;
  assert.notEqual(h1, h0, 'toggling head 1 redraws');
  const layers = await page.$$eval('#tr-layer option', (o) => o.map((x) => x.value));
  assert.ok(layers.length >= 2, `layers: ${layers}`);
  await page.selectOption('#tr-layer', layers[0]);
  assert.notEqual((await canvasProbe(page, '#tr-headview')).colorHash, h1, 'another layer, another drawing');
  const kinds = await page.$$eval('#tr-kind option', (o) => o.map((x) => x.value));
  assert.ok(kinds.length >= 2, `attention kinds: ${kinds}`);

  // Side by side: both models on the same sentence; a model this build lacks says so.
  await page.selectOption('#cmp-a', 'de-en-transformer');
  await page.selectOption('#cmp-b', 'de-en-rnn-additive');
  await page.click('#cmp-run');
  await page.waitForFunction(() => !document.getElementById('cmp-run').disabled, null, { timeout: 90_000 });
  assert.equal(await textOf('#cmp-a-text'), TRANSLATE[1].en);
  assert.ok((await canvasProbe(page, '#cmp-a-map')).color > 2000);
  await linksMatch(page, '#cmp-a-links', await reference('de-en-transformer', TRANSLATE[1].de));
  if (available('translation', 'de-en-rnn-additive')) {
    assert.ok((await textOf('#cmp-b-text')).length > 5);
    assert.ok((await canvasProbe(page, '#cmp-b-map')).color > 2000);
    await linksMatch(page, '#cmp-b-links', await reference('de-en-rnn-additive', TRANSLATE[1].de));
  } else {
    assert.match(await textOf('#cmp-b-text'), /not available in this build/);
  }
  await page.locator('#translate').screenshot({ path: path.join(ARTIFACTS, 'translate-compare.png') });

  // The RNN models through the main form: the page's beam-4 translation is the PyTorch decoder's (the bundle's
  // golden), the alignment is drawn, and there is no head view (one cross-attention map, no heads).
  for (const model of ['de-en-rnn-general', 'de-en-rnn-additive']) {
    await page.selectOption('#tr-model', model);
    await page.fill('#tr-beams', '4');
    await page.fill('#tr-input', TRANSLATE[0].de);
    const status = await submit('#tr-run', '#tr-status', 90_000);
    if (!available('translation', model)) {
      assert.match(status, /not available in this build/);
      t.diagnostic(`${model} is not shipped: checked the "not available" message`);
      continue;
    }
    assert.doesNotMatch(status, /Error|not available/, status);
    assert.equal(await textOf('#tr-output'), goldenBeam4(TRANSLATE[0].de, model), model);
    assert.ok((await canvasProbe(page, '#tr-heatmap')).color > 2000, `${model}: the alignment is drawn`);
    assert.equal(await page.isVisible('#tr-headview'), false, `${model}: no head view for an RNN`);
  }
});

// Align mode: the user's own English translation, forced through the model (translate.align in the worker).
const OWN = { de: TRANSLATE[0].de, en: 'Two kids wearing yellow coats are playing in the mud.' };

test('align mode: links of a typed translation, a probability per word, clear errors, all by keyboard', { skip }, async (t) => {
  if (!available('translation', 'de-en-transformer')) {
    t.skip('needs the de-en-transformer bundle');
    return;
  }
  await page.selectOption('#tr-model', 'de-en-transformer');
  await page.fill('#tr-input', OWN.de);
  // Empty target: a clear error, nothing run.
  await page.fill('#al-target', '   ');
  await page.focus('#al-target');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('al-status').classList.contains('error'), null, { timeout: 5_000 });
  assert.match(await textOf('#al-status'), /English translation first/);
  // Keyboard: type the translation, Enter aligns.
  await page.fill('#al-target', '');
  await page.focus('#al-target');
  await page.keyboard.type(OWN.en);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => / ms$/.test(document.getElementById('al-status').textContent), null, { timeout: 90_000 });
  const status = await textOf('#al-status');
  assert.match(status, /log p of your translation -\d+\.\d\d/, status);
  assert.equal(await page.$eval('#al-target', (e) => e.value), OWN.en, 'Enter submitted, no new line');
  const ref = await reference('de-en-transformer', OWN.de, { target: OWN.en });
  await linksMatch(page, '#al-links', ref);
  assert.equal(await page.$eval('#al-heatmap', (e) => e.dataset.dims), `${ref.target_words.length}x${ref.source_words.length}`);
  assert.ok((await canvasProbe(page, '#al-heatmap')).color > 2000, 'the heatmap is drawn');
  // Each English word's probability: a bar in the drawing, and the number when the word is selected.
  await page.focus('#al-links');
  const layout = await page.$eval('#al-links', (c) => c.dataset.layout);
  await page.keyboard.press(layout === 'rows' ? 'ArrowDown' : 'ArrowRight');
  assert.match(await textOf('#al-links-cursor'), /^English “.+” \(log p -?\d+\.\d\d, p \d\.\d\d\) ↔ /);
  await page.locator('#al-wrap').screenshot({ path: path.join(ARTIFACTS, 'translate-align.png') });
  // The engine's own errors come back as text (textContent, not markup).
  await page.fill('#al-target', `<b>dog</b> ${'dog '.repeat(400)}`);
  await page.click('#al-run');
  await page.waitForFunction(() => document.getElementById('al-status').classList.contains('error'), null, { timeout: 30_000 });
  assert.match(await textOf('#al-status'), /^Error: .*at most/);
  assert.equal(await page.$eval('#al-status', (e) => e.children.length), 0, 'no markup in the error line');
  // "Start from the model's translation" by keyboard, then Align by keyboard.
  await page.focus('#al-copy');
  await page.keyboard.press('Enter');
  assert.equal(await page.$eval('#al-target', (e) => e.value), await textOf('#tr-output'));
  await page.focus('#al-run');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => / ms$/.test(document.getElementById('al-status').textContent), null, { timeout: 90_000 });
  assert.ok(Number(await page.$eval('#al-links', (c) => c.dataset.links)) > 0);
});

// One example per captioning model: the thumbnail picks the model (caption.js). A model this build does not ship
// must say so clearly and produce no caption.
// `beams` is the bundle's default decoding (config.json), which choosing the model puts in the beam field.
const CAPTION_CASES = [
  { model: 'flickr8k-mobilenet', thumb: 3, image: 'dog', shot: 'caption.png', beams: 10 },     // examples/dog.jpg
  { model: 'shapes', thumb: 1, image: 'shapes-1', shot: 'caption-shapes.png', beams: 1 },       // examples/shapes-1.png
];

test('caption: a caption and per-word attention over the image, or a clear "not available"', { skip }, async (t) => {
  let ran = 0;
  for (const c of CAPTION_CASES) {
    await page.click(`#cap-examples .thumb:nth-child(${c.thumb})`);
    await page.waitForFunction((re) => new RegExp(re).test(document.getElementById('cap-status').textContent),
      `Image: ${c.image}`, { timeout: 10_000 });
    assert.equal(await page.$eval('#cap-model', (s) => s.value), c.model);
    assert.equal(await page.$eval('#cap-beams', (i) => i.value), String(c.beams), 'the model\'s default beam width');
    const status = await submit('#cap-run', '#cap-status', 90_000);
    if (!available('captioning', c.model)) {
      assert.match(status, /captioning model not available in this build/i);
      assert.equal(await textOf('#cap-output'), '', 'no fake caption');
      await page.locator('#caption').screenshot({ path: path.join(ARTIFACTS, `missing-${c.shot}`) });
      t.diagnostic(`the ${c.model} captioning pipeline or bundle is missing: checked the "not available" message`);
      continue;
    }
    ran += 1;
    assert.doesNotMatch(status, /Error|not available/, status);
    const caption = await textOf('#cap-output');
    if (c.model === 'shapes') {
      // shapes-1.png is "a small green triangle left of a large blue triangle" (shapes.py, held-out scene 3003/5):
      // the caption must follow the generator's grammar and name a triangle.
      assert.match(caption, new RegExp(`^${SHAPES_OBJ}( (left of|above|below) ${SHAPES_OBJ})*$`));
      assert.match(caption, /triangle/);
    } else {
      // A photo of a black dog in a wood: a real sentence that names the dog, not a tiny random decoder's word salad.
      assert.ok(caption.split(' ').length >= 3, caption);
      assert.match(caption, /^[a-z]/, caption);
      assert.match(caption, /\bdog\b/, caption);
    }
    const words = await page.$$eval('#cap-words button', (x) => x.length);
    assert.ok(words >= 3, `${words} word buttons`);
    const a = await canvasProbe(page, '#cap-overlay', { bottom: 0.12 });
    await page.focus('#cap-scrub');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    const b = await canvasProbe(page, '#cap-overlay', { bottom: 0.12 });
    assert.ok(a.ink > 1000 && b.ink > 1000, 'the overlay has ink');
    assert.notEqual(a.hash, b.hash, 'stepping to another word changes the overlay');
    // The screenshot shows the 5th photo word (function words like "a" often spread their attention thinly) and
    // the 3rd shapes word, the first object's colour ("green").
    if (c.model !== 'shapes') {
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
    }
    await page.locator('#caption').screenshot({ path: path.join(ARTIFACTS, c.shot) });
  }
  if (ran === 0 && existsSync(pipelineModule('captioning')) && existsSync(TINY_SAT) && hasBundle('mobilenet-v2-imagenet')) {
    await captionMechanics();
  }
});

// Without a shipped captioning bundle, the caption UI still gets exercised end to end: the tiny random test bundle
// of the captioning goldens (tests/goldens/captioning/tiny-sat) is served in place of /models/shapes/. Its captions
// are meaningless, so only the mechanics are checked: one word button per generated token, an overlay with ink
// that changes when the scrubber moves.
const TINY_SAT = path.join(ROOT, 'tests', 'goldens', 'captioning', 'tiny-sat');
async function captionMechanics() {
  const handler = (route) => {
    const file = new URL(route.request().url()).pathname.split('/').pop();
    const p = path.join(TINY_SAT, file);
    if (!/^[\w.-]+$/.test(file) || !existsSync(p)) return route.fulfill({ status: 404, body: 'not found' });
    let body = readFileSync(p);
    if (file === 'config.json') body = Buffer.from(body.toString().replace('"tiny-sat"', '"shapes"'));
    return route.fulfill({ status: 200, body });
  };
  await page.route('**/models/shapes/**', handler);
  try {
    await page.selectOption('#cap-model', 'shapes');
    await page.fill('#cap-beams', '1');
    const status = await submit('#cap-run', '#cap-status', 90_000);
    assert.doesNotMatch(status, /Error|not available/, status);
    const caption = await textOf('#cap-output');
    const words = await page.$$eval('#cap-words button', (b) => b.map((x) => x.textContent));
    assert.ok(caption.length > 0 && words.length >= 1, `caption "${caption}", words ${words}`);
    const a = await canvasProbe(page, '#cap-overlay', { bottom: 0.12 });
    await page.focus('#cap-scrub');
    await page.keyboard.press('End');
    const b = await canvasProbe(page, '#cap-overlay', { bottom: 0.12 });
    assert.ok(a.ink > 1000 && b.ink > 1000, 'the overlay has ink');
    if (words.length > 1) assert.notEqual(a.hash, b.hash, 'another word, another overlay');
  } finally {
    await page.unroute('**/models/shapes/**', handler);
  }
}

// Strict CSP (scripts/serve.mjs): the page, its worker and its service worker get the header; the page has no inline
// script, style or event handler, builds no HTML from strings, and the Emscripten glue needs no eval. Violations are
// collected by watchCsp() on every page of this file (and fail its problems check).
test('strict Content-Security-Policy: sent with the page and its scripts, nothing inline, no eval', { skip }, async () => {
  const directives = Object.fromEntries(CSP.split(/;\s*/).map((d) => { const [k, ...v] = d.split(/\s+/); return [k, v]; }));
  assert.deepEqual(directives['script-src'], ["'self'", "'wasm-unsafe-eval'"]);
  assert.deepEqual(directives['style-src'], ["'self'"]);
  assert.deepEqual(directives['object-src'], ["'none'"]);
  assert.doesNotMatch(CSP, /'unsafe-eval'|'unsafe-inline'|'unsafe-hashes'|\*/); // 'wasm-unsafe-eval' is not 'unsafe-eval'
  for (const file of ['', 'index.html', 'app.js', 'worker.js', 'sw.js', '../wasm/dist/attnlens.js']) {
    const res = await fetch(new URL(file, url));
    assert.equal(res.status, 200, file);
    assert.equal(res.headers.get('content-security-policy'), CSP, `${file || '/web/'} is served with the policy`);
    await res.arrayBuffer();
  }
  const html = readFileSync(path.join(ROOT, 'web', 'index.html'), 'utf8');
  assert.doesNotMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/i, 'no inline <script>');
  assert.doesNotMatch(html, /<[^>]*\son[a-z]+\s*=/i, 'no inline event handler attribute');
  assert.doesNotMatch(html, /<[^>]*\sstyle\s*=|<style/i, 'no style attribute or <style> element');
  assert.doesNotMatch(html, /javascript:/i);
  for (const f of readdirSync(path.join(ROOT, 'web')).filter((x) => x.endsWith('.js'))) {
    const src = readFileSync(path.join(ROOT, 'web', f), 'utf8');
    assert.doesNotMatch(src, /\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser/,
      `web/${f}: no HTML built from strings`);
    assert.doesNotMatch(src, /\beval\s*\(|new Function\b|setAttribute\(\s*['"](style|on\w+)['"]/, `web/${f}: no eval, inline style or handler`);
  }
  // The Emscripten glue (built with -sDYNAMIC_EXECUTION=0) must not build functions from strings either.
  const glue = readFileSync(path.join(ROOT, 'wasm', 'dist', 'attnlens.js'), 'utf8');
  assert.doesNotMatch(glue, /new Function\s*\(|[^.\w]eval\s*\(/, 'wasm/dist/attnlens.js needs no unsafe-eval');
  // The page is running under the policy (the lab ran in the first test, the translator at load) with no violation.
  assert.equal(await page.evaluate(() => document.body.dataset.ready), 'true');
  assert.deepEqual(problems.filter((x) => /CSP|Content.Security.Policy|Refused to/i.test(x)), []);
});

// User text is only ever text: markup typed into every text field and run through every demo is never parsed.
const XSS = ['<img src=x onerror="window.__xss=1">', '"><script>window.__xss=1</script>'];

test('user text is never inserted as HTML: markup in every text field, through every demo', { skip }, async () => {
  const fields = await page.$$eval('textarea, input:not([type]), input[type=text], input[type=search], [contenteditable]',
    (els) => els.filter((e) => !e.closest('#lab')).map((e) => e.id).sort());
  // Every text field of the page is covered here (a new one must be added to the demos run below); those of the
  // attention lab by tests/e2e/lab.test.mjs, and 'op-input' ("Your model", which runs once a model is opened) by
  // tests/e2e/open.test.mjs.
  assert.deepEqual(fields, ['al-target', 'op-input', 'ptr-input', 'st-input', 'tr-input', 'vqa-question']);
  await page.selectOption('#tr-model', 'de-en-transformer');
  await page.selectOption('#st-model', 'sst2-selfattn');
  for (const payload of XSS) {
    for (const id of fields) await page.fill(`#${id}`, payload);
    const statuses = [];
    statuses.push(await submit('#tr-run', '#tr-status', 90_000));
    statuses.push(await submit('#al-run', '#al-status', 90_000));
    await page.click('#cmp-run');
    await page.waitForFunction(() => !document.getElementById('cmp-run').disabled, null, { timeout: 120_000 });
    statuses.push(await submit('#st-run', '#st-status', 60_000));
    for (const st of statuses) assert.doesNotMatch(st, /Error|crashed/, st);
    // The number-sorting and VQA demos refuse markup (not numbers; no known question word) or answer it: either way
    // their messages are text, the models keep working.
    for (const [run, status] of [['#ptr-run', '#ptr-status'], ['#vqa-run', '#vqa-status']]) {
      await page.$eval(status, (e) => { e.textContent = ''; });
      const st = await submit(run, status, 90_000);
      assert.doesNotMatch(st, /crashed/, st);
      assert.equal(await page.$eval(status, (e) => e.children.length), 0, `${status} holds text only`);
    }
    assert.equal(await page.evaluate(() => typeof window.__xss), 'undefined', `${payload}: no script ran`);
    assert.equal(await page.$$eval('img[src="x"], script:not([src]), [onerror]', (e) => e.length), 0, `${payload}: no element from the text`);
    // Where the text (or its translation) is shown, it is text: no child elements.
    for (const sel of ['#tr-output', '#tr-status', '#al-status', '#cmp-a-text', '#cmp-b-text', '#st-label', '#st-status']) {
      assert.equal(await page.$eval(sel, (e) => e.children.length), 0, `${sel} holds text only`);
    }
    const words = await page.$$eval('#st-words span', (s) => s.map((x) => ({ n: x.children.length, t: x.textContent })));
    assert.ok(words.length > 0 && words.every((w) => w.n === 0), 'sentiment words are text spans');
    // The SST-2 vocabulary has no "<img": the page shows the tokenizer's '<unk>' words, as text.
    assert.match(words.map((w) => w.t).join(' '), /<unk>|img|script/, 'the typed markup is shown as words');
  }
  assert.equal(await page.evaluate(() => typeof window.__xss), 'undefined');
});

// The inference worker survives: on a page opened with ?test-hooks=1 (client.js exposes window.attnlensTestHooks
// and the worker accepts 'debug-crash'), the next request fails on purpose: an uncaught error in the worker, a
// WebAssembly trap (RuntimeError: unreachable), or a worker that never answers (request timeout, set to 3 s here).
// Each time the translator's status line says the model crashed and was restarted, and the next translation works.
test('a worker that crashes, traps or hangs is restarted: a message, then the next translation works', { skip }, async (t) => {
  assert.equal(await page.evaluate(() => typeof window.attnlensTestHooks), 'undefined', 'no test hooks without ?test-hooks=1');
  if (!available('translation', 'de-en-transformer')) {
    t.skip('needs the de-en-transformer bundle');
    return;
  }
  const tab = await browser.context.newPage();
  const tabProblems = watchProblems(tab, { allow: allowMissing });
  await watchCsp(tab, tabProblems);
  try {
    await tab.goto(`${url}?test-hooks=1`);
    await tab.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });
    await tab.waitForFunction(isDone, '#tr-status', { timeout: 120_000 }); // the automatic first translation
    // de-en-transformer (its goldens are TRANSLATE), whatever the page's default model is.
    await tab.selectOption('#tr-model', 'de-en-transformer');
    await tab.fill('#tr-beams', '4');
    const defaultTimeout = await tab.evaluate(() => window.attnlensTestHooks.requestTimeout());
    assert.equal(defaultTimeout, 120_000, 'a generous default timeout');
    await tab.fill('#tr-input', TRANSLATE[1].de);
    const REASON = { throw: /debug-crash: an uncaught error in the worker/, trap: /RuntimeError: unreachable/, hang: /did not answer for 3 s/ };
    for (const mode of ['throw', 'trap', 'hang']) {
      if (mode === 'hang') await tab.evaluate(() => window.attnlensTestHooks.setRequestTimeout(3000));
      assert.deepEqual(await tab.evaluate((m) => window.attnlensTestHooks.crashNext(m), mode), { armed: mode });
      await tab.click('#tr-run');
      await tab.waitForFunction(() => document.getElementById('tr-status').classList.contains('crashed'), null, { timeout: 60_000 });
      const msg = await tab.$eval('#tr-status', (e) => e.textContent.trim());
      assert.match(msg, /^The model crashed and was restarted: .+\. Try again\.$/, msg);
      assert.match(msg, REASON[mode], msg);
      assert.equal(await tab.$eval('#tr-run', (b) => b.disabled), false, `${mode}: the button works again`);
      if (mode === 'hang') await tab.evaluate((ms) => window.attnlensTestHooks.setRequestTimeout(ms), defaultTimeout);
      // The next request runs in a fresh worker (the bundle comes from the Cache API again).
      await tab.click('#tr-run');
      const status = await waitForRun(tab, '#tr-status', { timeout: 120_000 });
      assert.doesNotMatch(status, /crashed/, status);
      assert.equal(await tab.$eval('#tr-output', (e) => e.textContent.trim()), TRANSLATE[1].en, `${mode}: translating works again`);
    }
    assert.equal(await tab.evaluate(() => window.attnlensTestHooks.restarts()), 3);
    await tab.screenshot({ path: path.join(ARTIFACTS, 'worker-restarted.png') });
    assert.deepEqual(tabProblems.filter((x) => !/debug-crash/.test(x)), [], 'nothing else went wrong');
    // The CSP check itself works: markup injected on purpose (by the test, not the page) is reported and its
    // inline handler blocked.
    await tab.evaluate(() => {
      const d = document.createElement('div');
      d.innerHTML = '<img src="x" onerror="window.__xss=1">';
      document.body.append(d);
    });
    await tab.waitForFunction(() => document.querySelector('img[src="x"]').complete, null, { timeout: 10_000 });
    for (let i = 0; i < 50 && !tabProblems.some((x) => /^CSP violation: script-src/.test(x)); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(tabProblems.some((x) => /^CSP violation: script-src/.test(x)), `the violation is reported: ${tabProblems.join('; ')}`);
    assert.equal(await tab.evaluate(() => typeof window.__xss), 'undefined', 'the inline handler did not run');
  } finally {
    await tab.close();
  }
});

test('phone width: no horizontal scrolling, demos stay usable', { skip }, async () => {
  const phone = await browser.context.newPage();
  const phoneProblems = watchProblems(phone, { allow: allowMissing });
  await watchCsp(phone, phoneProblems);
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(url);
  await phone.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });
  const overflow = () => phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(await overflow() <= 1, `the page is ${await overflow()}px wider than the phone`);
  await phone.screenshot({ path: path.join(ARTIFACTS, 'phone.png') });
  if (available('translation', 'de-en-transformer')) {
    // A long sentence: the drawings fit the width (or scroll inside their panel), the page itself does not.
    await phone.fill('#tr-input', 'Ein Mann mit einem blauen Rucksack liest die Zeitung, während er auf die U-Bahn wartet.');
    await phone.click('#tr-run');
    await phone.waitForFunction(() => /ms$/.test(document.getElementById('tr-status').textContent), null, { timeout: 90_000 });
    assert.ok(await overflow() <= 1, `with results the page is ${await overflow()}px wider than the phone`);
    await phone.locator('#translate').screenshot({ path: path.join(ARTIFACTS, 'phone-translate.png') });
    assert.ok(Number(await phone.$eval('#tr-links', (c) => c.dataset.links)) > 0, 'links at 390 px');
    await phone.fill('#al-target', 'A man with a blue backpack reads the newspaper while he waits for the subway.');
    await phone.click('#al-run');
    await phone.waitForFunction(() => / ms$/.test(document.getElementById('al-status').textContent), null, { timeout: 90_000 });
    assert.ok(Number(await phone.$eval('#al-links', (c) => c.dataset.links)) > 0, 'align links at 390 px');
    assert.ok(await overflow() <= 1, `with the alignment the page is ${await overflow()}px wider than the phone`);
    await phone.locator('#al-wrap').screenshot({ path: path.join(ARTIFACTS, 'phone-translate-align.png') });
  }
  await phone.locator('#lab').screenshot({ path: path.join(ARTIFACTS, 'phone-lab.png') });
  await phone.close();
  assert.deepEqual(phoneProblems, []);
});

test('a reload works offline (service worker + Cache API)', { skip }, async (t) => {
  if (!existsSync(pipelineModule('sentiment'))) {
    t.skip('needs the sentiment pipeline');
    return;
  }
  await page.evaluate(() => navigator.serviceWorker.ready);
  page.__offline = true;
  await browser.context.setOffline(true);
  try {
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });
    await page.selectOption('#st-model', 'sst2-selfattn');
    await page.fill('#st-input', SENTIMENT[1].text);
    const status = await submit('#st-run', '#st-status');
    assert.doesNotMatch(status, /Error/, status);
    assert.equal(await textOf('#st-label'), SENTIMENT[1].label);
  } finally {
    await browser.context.setOffline(false);
    page.__offline = false;
  }
});

test('no console errors, failed requests or page errors', { skip }, async () => {
  await shot('desktop-top');
  await page.screenshot({ path: path.join(ARTIFACTS, 'desktop-full.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test('served without COOP/COEP: not isolated, the single-threaded module, the same first translation', { skip }, async () => {
  const plainPage = await openPage({ width: 1024, isolated: false });
  try {
    await plainPage.page.goto(plainPage.url);
    await plainPage.page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });
    assert.equal(await plainPage.page.evaluate(() => globalThis.crossOriginIsolated), false);
    await plainPage.page.waitForFunction(() => document.body.dataset.workerThreads !== undefined, null, { timeout: 30_000 });
    assert.equal(await plainPage.page.evaluate(() => document.body.dataset.workerThreads), '1');
    await waitForRun(plainPage.page, '#tr-status');
    assert.equal(await plainPage.page.$eval('#tr-output', (e) => e.textContent.trim()), FIRST.en);
    assert.deepEqual(plainPage.problems, []);
  } finally {
    await plainPage.browser.close();
    plainPage.server.close();
  }
});

// The attention lab (web/lab.js, web/lab/) end to end in headless Chromium: a panel for every mechanism of the
// catalogue (docs/DESIGN.md §3), and for each panel: its input moved the way a person would move it (a point dragged
// with the mouse, a text box filled, a slider moved with the keyboard), its weights changed, and everything it shows
// equal to what the package's ops return when this test runs them itself, in the page, on the inputs the panel
// reports (≤ 1e-6), with the numbers on screen equal to those weights. Screenshots of the lab at 1440 and 390 px go
// to tests/e2e/artifacts/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  ROOT, ARTIFACTS, BROWSER_SKIP, allowMissing, watchProblems, watchCsp, usePage, url, browser, page, problems,
} from './helpers.mjs';

const skip = BROWSER_SKIP;

// The twenty rows of the catalogue (DESIGN §3) and the op that carries each row: every row must have a panel whose
// data-op is this op.
const ROWS = {
  'dot': 'score_dot',
  'scaled dot': 'score_scaled_dot',
  'general / bilinear': 'score_general',
  'additive / concat': 'score_additive',
  'cosine': 'score_cosine',
  'location-based': 'score_location',
  'global soft (masks)': 'align_soft',
  'local-m / local-p': 'align_local_p',
  'hard': 'align_hard_argmax',
  'soft / key-value context': 'key_value_attention',
  'multi-head': 'multi_head_attention',
  'structured self-attention': 'structured_self_attention',
  'relation-network self-attention': 'relation_self_attention',
  'co-attention': 'co_attention_parallel',
  'attention-over-attention': 'attention_over_attention',
  'hierarchical': 'hierarchical_attention',
  'pointer': 'pointer_attention',
  'coverage': 'coverage_attention',
  'position-weighted memory': 'position_weighted_memory',
  'visual soft attention': 'visual_soft_attention',
};
// Every op of the repo's own op table (docs/DESIGN.md §3) must run in some panel.
const DOC_OPS = readFileSync(path.join(ROOT, 'docs', 'DESIGN.md'), 'utf8').split('\n')
  .map((line) => /^\| (score|alignment|context|composite) \| `([a-z_]+)` \|/.exec(line)?.[2]).filter(Boolean);

const PLANE_OPS = ['score_dot', 'score_scaled_dot', 'score_general', 'score_additive', 'score_cosine', 'score_location',
  'align_soft', 'align_local_p', 'align_hard_argmax', 'key_value_attention', 'multi_head_attention',
  'structured_self_attention', 'relation_self_attention'];

// A link to the lab (?demo=lab) opens the page scrolled there, so the model demos above, which run when they come
// into view, stay idle and cannot shift the page under a drag.
usePage({
  skip, width: 1440, path: () => labUrl(),
  async then() {
    await settle(page);
    // The image panel has its weights once the example image has loaded.
    await page.waitForFunction(() => {
      const d = document.querySelector('.lab-panel[data-op="visual_soft_attention"] .weights');
      return d && JSON.parse(d.dataset.weights || '{}').alpha;
    }, null, { timeout: 15_000 });
  },
});

/**
 * Waits until the lab stops moving: the sentiment demo just above it may be on screen and run its example, which
 * makes its section taller (app.js). Done when the lab's place in the document has held for 2.5 s with no demo busy.
 */
async function settle(p) {
  let last = null;
  let since = Date.now();
  for (const end = Date.now() + 90_000; Date.now() < end; await p.waitForTimeout(250)) {
    const now = await p.evaluate(() => {
      const busy = [...document.querySelectorAll('.msg[role=status]')].some((s) => s.classList.contains('busy'));
      return `${Math.round(document.getElementById('lab').getBoundingClientRect().top + scrollY)}${busy ? ' busy' : ''}`;
    });
    if (now !== last) { last = now; since = Date.now(); } else if (!now.endsWith('busy') && Date.now() - since > 2500) return;
  }
  throw new Error('the page above the lab kept moving for 90 s');
}
const labUrl = () => new URL('/web/?demo=lab', url).href;
const panelSel = (op) => `.lab-panel[data-op="${op}"]`;

/** The panel's published weights, calls and input. */
function read(op) {
  return page.$eval(panelSel(op), (box) => {
    const d = box.querySelector('.weights');
    return { weights: JSON.parse(d.dataset.weights), calls: JSON.parse(d.dataset.calls), input: JSON.parse(box.dataset.input) };
  });
}

/**
 * Runs every call the panel reports through the package in the page (its own import, one method per op), and
 * compares: each label of data-weights with the outputs the calls show (in call order), and each number on screen
 * (data-k) with the weight it stands for. Returns what it checked.
 */
function recompute(op) {
  return page.evaluate(async (sel) => {
    const { attention, init } = await import('/wasm/index.js');
    await init();
    const box = document.querySelector(sel);
    const d = box.querySelector('.weights');
    const weights = JSON.parse(d.dataset.weights);
    const calls = JSON.parse(d.dataset.calls);
    const expected = {};
    for (const c of calls) {
      const inputs = {};
      for (const [name, t] of Object.entries(c.inputs)) inputs[name] = { dims: t.dims, data: new Float32Array(t.data) };
      const method = c.op.replace(/_([a-z0-9])/g, (_, ch) => ch.toUpperCase());
      const out = attention[method](inputs, c.params);
      for (const [label, name] of Object.entries(c.show)) (expected[label] ??= []).push(...out[name].data);
    }
    const errors = [];
    let maxDiff = 0;
    const labels = Object.keys(weights).sort();
    if (labels.join() !== Object.keys(expected).sort().join()) errors.push(`labels ${labels} vs calls' ${Object.keys(expected).sort()}`);
    for (const [label, want] of Object.entries(expected)) {
      const got = weights[label] ?? [];
      if (got.length !== want.length) errors.push(`${label}: ${got.length} values, the op gives ${want.length}`);
      want.forEach((w, i) => {
        const diff = Math.abs(got[i] - w);
        if (!(diff <= 1e-6)) errors.push(`${label}[${i}] = ${got[i]}, the op gives ${w}`);
        else maxDiff = Math.max(maxDiff, diff);
      });
    }
    let shown = 0;
    for (const e of box.querySelectorAll('[data-k]')) {
      const [label, index] = e.dataset.k.split(':');
      const text = e.title || e.textContent;
      const m = /(-?\d+(?:\.\d+)?)\s*$/.exec(text);
      const value = weights[label]?.[Number(index)];
      if (!m || value === undefined || Math.abs(Number(m[1]) - value) > 5e-4) errors.push(`on screen ${e.dataset.k}: "${text}" vs ${value}`);
      shown++;
    }
    const inputs = calls.reduce((n, c) => n + Object.keys(c.inputs).length, 0);
    return { calls: calls.map((c) => c.op), labels, errors: errors.slice(0, 10), maxDiff, shown, inputs };
  }, panelSel(op));
}

/** Checks the panel against the ops and returns its weights. */
async function verify(op, why) {
  const r = await recompute(op);
  assert.deepEqual(r.errors, [], `${op} (${why}): what the panel shows equals the op's output`);
  assert.ok(r.calls.length > 0 && r.inputs > 0, `${op}: ran at least one op on inputs`);
  assert.ok(r.shown > 0, `${op}: shows numbers`);
  return r;
}

/** Performs `act`, then checks that the panel's weights changed and still equal the ops' output. */
async function changes(op, why, act) {
  const before = await read(op);
  await act();
  const after = await read(op);
  assert.notDeepEqual(after.weights, before.weights, `${op}: ${why} changes the weights`);
  assert.notDeepEqual(after.input, before.input, `${op}: ${why} changes the input the panel reports`);
  await verify(op, why);
  return after;
}

/** Drags plane point `index` (0: the query) to plane coordinates `to` with the mouse. */
async function dragPoint(index, to) {
  const canvas = page.locator('#plane');
  await page.$eval('#lab', (lab) => lab.scrollIntoView({ block: 'start' }));
  const box = await canvas.boundingBox();
  const points = JSON.parse(await canvas.getAttribute('data-points'));
  const R = 2.2;
  const px = ([x, y]) => [box.x + ((x + R) / (2 * R)) * box.width, box.y + ((R - y) / (2 * R)) * box.height];
  const [x0, y0] = px(points[index]);
  const [x1, y1] = px(to);
  await page.mouse.move(x0, y0);
  await page.mouse.down();
  await page.mouse.move(x1, y1, { steps: 6 });
  await page.mouse.up();
  const moved = JSON.parse(await canvas.getAttribute('data-points'))[index];
  assert.ok(Math.hypot(moved[0] - to[0], moved[1] - to[1]) < 0.1, `point ${index} followed the mouse to ${to}: ${moved}`);
}

/** Focuses the panel's control with this aria-label and presses `key` `times` times. */
async function press(op, aria, key, times = 1) {
  const control = page.locator(`${panelSel(op)} [aria-label="${aria}"]`);
  await control.scrollIntoViewIfNeeded();
  await control.focus();
  for (let i = 0; i < times; i++) await page.keyboard.press(key);
}

async function fill(op, aria, text) {
  const box = page.locator(`${panelSel(op)} [aria-label="${aria}"]`);
  await box.scrollIntoViewIfNeeded();
  await box.fill(text);
}

test('a panel for each of the twenty mechanisms, every op of the catalogue in use', { skip }, async () => {
  const panels = await page.$$eval('.lab-panel', (els) => els.map((b) => ({
    op: b.dataset.op, ops: b.dataset.ops.split(' '), title: b.querySelector('h3').textContent,
    formula: b.querySelector('.formula').textContent,
  })));
  assert.ok(panels.length >= 20, `${panels.length} panels`);
  const ops = panels.map((p) => p.op);
  assert.equal(new Set(ops).size, ops.length, `each panel has its own op: ${ops}`);
  for (const [row, op] of Object.entries(ROWS)) assert.ok(ops.includes(op), `DESIGN §3 row "${row}" has a panel (${op})`);
  assert.equal(DOC_OPS.length, 27, 'the op table of docs/DESIGN.md §3 was read');
  const used = new Set(panels.flatMap((p) => p.ops));
  for (const op of DOC_OPS) assert.ok(used.has(op), `${op} runs in some panel`);
  for (const p of panels) {
    assert.match(p.title, / — .*(19|20)\d\d/, `${p.op}: the title names the paper: ${p.title}`);
    assert.ok(p.formula.length > 10, `${p.op}: a formula`);
  }
  // Every control has an accessible name.
  const unnamed = await page.$$eval('#lab input, #lab select, #lab textarea, #lab button, #lab canvas',
    (els) => els.filter((e) => !e.getAttribute('aria-label') && !e.closest('label') && !e.textContent.trim()).map((e) => e.outerHTML));
  assert.deepEqual(unnamed, []);
  // And every panel, as the page first shows it, equals the ops' output.
  for (const op of ops) await verify(op, 'first sight');
});

test('plane panels: dragging the query changes each of them, and each equals its ops', { skip }, async () => {
  const targets = [[-1.0, 1.2], [1.3, -0.4], [0.2, -1.6], [-1.5, -0.8], [1.6, 1.4]];
  for (const [i, op] of PLANE_OPS.entries()) {
    const after = await changes(op, 'dragging the query', () => dragPoint(0, targets[i % targets.length]));
    // The panel ran on the points the plane shows.
    const points = JSON.parse(await page.getAttribute('#plane', 'data-points'));
    assert.deepEqual(after.input.points, points, `${op}: the panel's points are the plane's`);
  }
  // The score functions read the query and the keys as drawn (float32 of the plane's coordinates).
  const points = JSON.parse(await page.getAttribute('#plane', 'data-points'));
  const { calls } = await read('score_dot');
  assert.deepEqual(calls[0].inputs.q.data, points[0].map(Math.fround));
  assert.deepEqual(calls[0].inputs.keys.data, points.slice(1).flat().map(Math.fround));
});

test('location-based scores read the query only: dragging a key leaves them alone', { skip }, async () => {
  const before = await read('score_location');
  const dotBefore = await read('score_dot');
  await dragPoint(2, [-0.3, 2.0]);
  assert.deepEqual((await read('score_location')).weights, before.weights, 'no keys are read');
  assert.notDeepEqual((await read('score_dot')).weights, dotBefore.weights, 'while the dot scores move');
  await verify('score_location', 'a key moved');
});

test('plane panels with sliders and switches follow the keyboard', { skip }, async () => {
  await changes('align_soft', 'the padding slider', () => press('align_soft', 'global soft: number of padded positions at the end', 'ArrowRight', 2));
  const masked = await read('align_soft');
  // Padding: the last two of the six points get no weight from any row.
  for (let r = 0; r < 6; r++) assert.deepEqual(masked.weights.weights.slice(r * 6 + 4, r * 6 + 6), [0, 0], `row ${r}: padding masked`);
  await changes('align_soft', 'the causal switch', async () => {
    await page.locator(`${panelSel('align_soft')} [aria-label="global soft: causal mask"]`).focus();
    await page.keyboard.press('Space');
  });
  const causal = await read('align_soft');
  assert.equal(causal.weights.weights[1], 0, 'causal: the first row sees only itself');
  await changes('align_local_p', 'the p slider', () => press('align_local_p', 'local-p window: p', 'ArrowLeft', 8));
  await changes('align_local_p', 'the D slider', () => press('align_local_p', 'local-p window: D', 'ArrowRight'));
  await changes('align_hard_argmax', 'the seed slider', () => press('align_hard_argmax', 'hard vs soft: seed', 'ArrowRight', 3));
  const r3 = await changes('structured_self_attention', 'the r slider', () => press('structured_self_attention', 'structured self-attention: number of hops r', 'ArrowRight'));
  assert.equal(r3.weights.a.length, 3 * 6, 'three hops over six points');
  assert.equal(r3.weights.penalty.length, 1);
});

test('text panels: typing changes each of them, and each equals its ops', { skip }, async () => {
  await changes('co_attention_parallel', 'a new question', () => fill('co_attention_parallel', 'co-attention, parallel: question', 'who went to the garden'));
  await changes('co_attention_parallel', 'a new context', () => fill('co_attention_parallel', 'co-attention, parallel: context', 'john went to the garden with the dog'));
  const co = await read('co_attention_parallel');
  assert.equal(co.weights.affinity.length, 5 * 8, 'question × context affinity');
  await changes('co_attention_alternating', 'a new question', () => fill('co_attention_alternating', 'co-attention, alternating: question', 'is the dog big'));
  await changes('attention_over_attention', 'a new query', () => fill('attention_over_attention', 'attention-over-attention: query', 'where did john go'));
  const aoa = await read('attention_over_attention');
  assert.equal(aoa.weights.s.length, 12, 'one s per document word');
  await changes('hierarchical_attention', 'a new paragraph', () => fill('hierarchical_attention', 'hierarchical attention: paragraph',
    'The room was small. The bed was great. The view was great too!'));
  const h = await read('hierarchical_attention');
  assert.equal(h.weights.sentence_alpha.length, 3, 'three sentences');
  await changes('hierarchical_attention', 'a new context word', () => fill('hierarchical_attention', 'hierarchical attention: context word', 'room'));
  const ptr = await changes('pointer_attention', 'new numbers', () => fill('pointer_attention', 'pointer network: numbers to point at', '8 1 5 13 2 21'));
  const xs = [8, 1, 5, 13, 2, 21];
  const picked = ptr.weights.pointers.map((j) => xs[j]);
  assert.deepEqual(picked, [...xs].sort((a, b) => a - b), 'the toy pointer network sorts ascending');
  assert.equal(ptr.weights.probs.length, 36, 'six steps over six positions');
  await changes('position_weighted_memory', 'a new sentence', () => fill('position_weighted_memory', 'position-weighted memory: sentence', 'the battery is good but the screen is dim'));
  await changes('position_weighted_memory', 'the aspect slider', () => press('position_weighted_memory', 'position-weighted memory: position of the aspect word', 'ArrowLeft', 2));
  const tang = await changes('position_weighted_memory', 'the hop slider', () => press('position_weighted_memory', 'position-weighted memory: hop (Model 1)', 'ArrowRight'));
  assert.equal(tang.weights.alpha.length, 4 * 8, 'four location models over eight context words');
});

test('coverage accumulates over the decoder steps of its slider', { skip }, async () => {
  const op = 'coverage_attention';
  await changes(op, 'a new source', () => fill(op, 'coverage: source sentence', 'zwei kinder spielen im schlamm'));
  for (const key of ['ArrowRight', 'ArrowRight', 'ArrowLeft']) {
    const before = await read(op);
    const after = await changes(op, `the step slider (${key})`, () => press(op, 'coverage: decoder step', key));
    const t = after.input.step;
    assert.equal(after.weights.weights.length, t * 5, `${t} steps over five words`);
    // Tu 2016: the coverage after t steps is the sum of their weights.
    for (let j = 0; j < 5; j++) {
      let sum = 0;
      for (let s = 0; s < t; s++) sum += after.weights.weights[s * 5 + j];
      assert.ok(Math.abs(sum - after.weights.coverage[j]) < 1e-5, `coverage[${j}] = Σ_t α_tj`);
    }
    if (key === 'ArrowRight') {
      for (let j = 0; j < 5; j++) assert.ok(after.weights.coverage[j] >= before.weights.coverage[j], 'a further step only adds coverage');
    }
  }
  await changes(op, 'the coverage weight', () => press(op, 'coverage: weight of the coverage in the score', 'Home'));
  const stuck = await read(op);
  // With w = 0 every step asks the same question and gets the same answer.
  const t = stuck.input.step;
  for (let s = 1; s < t; s++) {
    assert.deepEqual(stuck.weights.weights.slice(s * 5, s * 5 + 5), stuck.weights.weights.slice(0, 5), 'no coverage: the same row each step');
  }
});

test('visual soft attention: dragging the query over the image, and steps for the penalty', { skip }, async () => {
  const op = 'visual_soft_attention';
  const canvas = page.locator(`${panelSel(op)} canvas`);
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const cell = (gx, gy) => [box.x + ((gx + 0.5) / 8) * box.width, box.y + ((gy + 0.5) / 8) * box.height];
  const start = JSON.parse(await canvas.getAttribute('data-cell'));
  const after = await changes(op, 'dragging the query', async () => {
    await page.mouse.move(...cell(...start));
    await page.mouse.down();
    await page.mouse.move(...cell(1, 1), { steps: 5 });
    await page.mouse.up();
  });
  assert.deepEqual(after.input.cell, [1, 1], 'the query followed the mouse');
  assert.equal(after.weights.alpha.length, 64);
  // The query sits on the purple square: the most attended cell has its colour (close to the query's own cell).
  const top = after.weights.alpha.indexOf(Math.max(...after.weights.alpha));
  const h = after.calls[0].inputs.h.data;
  const f = after.calls[0].inputs.features.data.slice(top * 5, top * 5 + 3);
  assert.ok(Math.hypot(f[0] - h[0], f[1] - h[1], f[2] - h[2]) < 0.15, 'the most attended cell has the query\'s colour');
  await changes(op, 'the arrow keys', async () => {
    await canvas.focus();
    await page.keyboard.press('ArrowRight');
  });
  const one = (await read(op)).weights.penalty[0];
  await changes(op, 'keeping a step', () => page.click(`${panelSel(op)} button:has-text("Keep this step")`));
  const kept = await read(op);
  assert.equal(kept.input.kept, 1);
  assert.equal(kept.calls[1].inputs.alphas.dims[0], 2, 'the penalty runs over two steps');
  assert.notEqual(kept.weights.penalty[0], one);
  await changes(op, 'another image', () => page.selectOption(`${panelSel(op)} select`, '1').then(() => page.waitForFunction((sel) => {
    const d = document.querySelector(sel);
    return JSON.parse(d.dataset.input).image === 'shapes-1.png' && JSON.parse(d.querySelector('.weights').dataset.weights).alpha;
  }, panelSel(op))));
});

test('typed markup stays text in every text box of the lab', { skip }, async () => {
  const fields = await page.$$eval('#lab textarea, #lab input[type=text]', (els) => els.map((e) => e.id));
  assert.equal(fields.length, 11, `the lab's text boxes: ${fields}`);
  assert.ok(fields.every((id) => /^lab-[a-z0-9-]+$/.test(id)), 'each has an id');
  for (const payload of ['<img src=x onerror="window.__xss=1">', '"><script>window.__xss=1</script> 3 1 2']) {
    for (const id of fields) {
      const before = await page.$eval(`#${id}`, (e) => e.value);
      await page.fill(`#${id}`, payload);
      await page.fill(`#${id}`, before + payload);
    }
    assert.equal(await page.evaluate(() => typeof window.__xss), 'undefined', `${payload}: no script ran`);
    assert.equal(await page.$$eval('#lab img, #lab script, #lab [onerror]', (e) => e.length), 0, `${payload}: no element from the text`);
    // The panels still run (the markup is read as words or numbers) and equal their ops.
    for (const op of await page.$$eval('#lab-text .lab-panel', (els) => els.map((b) => b.dataset.op))) await verify(op, payload);
  }
});

test('screenshots at 1440 and 390 px; no horizontal scrolling; no console error', { skip }, async () => {
  // The plane sticks to the top of the screen while the panels scroll past it (wide screens); in a picture of the
  // whole lab it belongs at the top.
  await page.$eval('.plane-wrap', (e) => { e.style.position = 'static'; });
  await page.locator('#lab').screenshot({ path: path.join(ARTIFACTS, 'lab-all-1440.png') });
  await page.$eval('.plane-wrap', (e) => { e.style.position = ''; });
  const phone = await browser.context.newPage();
  const phoneProblems = watchProblems(phone, { allow: allowMissing });
  await watchCsp(phone, phoneProblems);
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(labUrl());
  await phone.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });
  await settle(phone);
  await phone.waitForFunction(() => JSON.parse(document.querySelector('.lab-panel[data-op="visual_soft_attention"] .weights').dataset.weights).alpha);
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `the page is ${overflow}px wider than the phone`);
  const wide = await phone.$$eval('.lab-panel', (els) => els.filter((b) => b.getBoundingClientRect().right > window.innerWidth + 1).map((b) => b.dataset.op));
  assert.deepEqual(wide, [], 'every panel fits the width');
  await phone.locator('#lab').screenshot({ path: path.join(ARTIFACTS, 'lab-all-390.png') });
  await phone.close();
  assert.deepEqual(phoneProblems, []);
  assert.deepEqual(problems, []);
});

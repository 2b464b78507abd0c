// "Your model" (web/open.js, web/open-worker.js) end to end in headless Chromium: a committed converted bundle
// (tests/fixtures/hf/bert-small/bundle) opened through the folder picker, and a Hugging Face folder
// (tests/fixtures/hf/gpt2-tiny/hf) dropped on the section and converted in the worker; each runs an input and its
// views draw: the model view has one thumbnail per layer × head (and more with rollout and flow), the head view
// shows one toggle per head and draws coloured lines, the head statistics have one row per layer, the neuron view
// draws the query and key vectors, whose softmax(q·k/√d) equals the engine's map. The numbers shown are the
// package's own: the page's features and generated text equal a pipeline over the committed bundle run in the page's
// main thread. A folder without config.json and a
// folder of another kind give a clear error, and the page keeps working. Screenshots: tests/e2e/artifacts/open-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync, readdirSync } from 'node:fs';
import { ARTIFACTS, BROWSER_SKIP, ROOT, canvasProbe, usePage, page, problems } from './helpers.mjs';

const FIX = path.join(ROOT, 'tests', 'fixtures', 'hf');
const hfConfig = (dir) => JSON.parse(readFileSync(path.join(FIX, dir, 'bundle', 'config.json'), 'utf8')).hf_config;

usePage({ skip: BROWSER_SKIP, then: () => page.evaluate(() => document.getElementById('open').scrollIntoView()) });

/** Waits for the section's status line to leave "busy"; returns its text and class. */
async function settled() {
  await page.waitForFunction(() => {
    const s = document.getElementById('op-status');
    return s.textContent && !s.classList.contains('busy');
  }, null, { timeout: 120_000 });
  return page.$eval('#op-status', (s) => ({ text: s.textContent, error: s.classList.contains('error') }));
}

async function run(text) {
  if (text !== undefined) await page.fill('#op-input', text);
  await clearStatus();
  await page.click('#op-run');
  const s = await settled();
  assert.ok(!s.error, s.text);
  return s;
}

/** Files of this checkout as { name: base64 } (the test server serves web/, wasm/ and models/ only). */
const filesOf = (dir, names = readdirSync(path.join(FIX, dir))) =>
  Object.fromEntries(names.map((n) => [n, readFileSync(path.join(FIX, dir, n)).toString('base64')]));


/** Clears the status line, so that settled() waits for the next action's own status. */
const clearStatus = () => page.$eval('#op-status', (s) => { s.textContent = ''; });

/** Drops files on the section as a person dropping them would (a DataTransfer of Files). */
async function dropFiles(files) {
  await clearStatus();
  await page.evaluate(async (files) => {
    const dt = new DataTransfer();
    for (const [n, b] of Object.entries(files)) dt.items.add(new File([Uint8Array.from(atob(b), (c) => c.charCodeAt(0))], n));
    document.getElementById('op-drop').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, files);
}

/** Picks files (or a folder) with one of the section's file inputs. */
async function pick(selector, files) {
  await clearStatus();
  await page.setInputFiles(selector, files);
}

/** A pipeline over a committed bundle in the page's main thread (the package's own result). */
function reference(dir, task, input, options = {}) {
  return page.evaluate(async ({ files, task, input, options }) => {
    const { pipeline } = await import('/wasm/index.js');
    const f = Object.fromEntries(Object.entries(files).map(([n, b]) => [n, Uint8Array.from(atob(b), (c) => c.charCodeAt(0))]));
    const config = JSON.parse(new TextDecoder().decode(f['config.json']));
    const p = await pipeline(task, { name: config.name, config, files: f });
    // With the query and key vectors where the engine returns them, as the section asks (open-worker.js).
    const r = await p(input, { ...options, output_qk: true }).catch((err) => {
      if (!/output_qk/.test(err.message)) throw err;
      return p(input, options);
    });
    p.dispose();
    return { tokens: r.tokens, dims: r.dims && Array.from(r.dims), qk: Boolean(r.qk), generated_text: r.generated_text };
  }, { files: filesOf(path.join(dir, 'bundle')), task, input, options });
}

/** What the views show: thumbnails, head toggles, head-view ink, stats rows, neuron panel. */
async function views() {
  const shown = await page.evaluate(() => ({
    thumbs: document.querySelectorAll('#op-mv canvas').length,
    heads: document.querySelectorAll('#op-heads button').length,
    statsRows: [...document.querySelectorAll('#op-stats tr')].filter((r) => r.querySelector('td')).length,
    statsCells: [...document.querySelectorAll('#op-stats td')].map((td) => td.textContent),
    panels: !document.getElementById('op-panels').hidden,
    neuron: !document.getElementById('op-nv-panel').hidden,
    output: document.getElementById('op-output').textContent,
  }));
  shown.headView = await canvasProbe(page, '#op-headview');
  shown.firstThumb = await canvasProbe(page, '#op-mv canvas');
  return shown;
}

/** The neuron view is shown, draws, and its weights recomputed from q and k equal the engine's map. */
async function neuronDrawn(v) {
  assert.ok(v.neuron, 'the neuron view shows');
  assert.ok((await canvasProbe(page, '#op-neuron')).color > 100, 'the neuron view draws the vectors');
  const worst = Number(/at most ([\d.e+-]+)/.exec(await page.textContent('#op-nv-check'))[1]);
  assert.ok(worst < 1e-5, `q and k give the engine's map (worst ${worst})`);
}

test('a converted bundle opens through the folder picker; its views draw every layer × head', { skip: BROWSER_SKIP }, async () => {
  const { num_hidden_layers: L, num_attention_heads: H } = hfConfig('bert-small');
  await pick('#op-folder', path.join(FIX, 'bert-small', 'bundle'));
  const opened = await settled();
  assert.ok(!opened.error, opened.text);
  assert.match(await page.textContent('#op-model'), new RegExp(`${L} layers × ${H} heads`));
  const text = 'the quick brown fox jumps over the lazy dog .';
  await run(text);
  const v = await views();
  assert.ok(v.panels);
  assert.equal(v.thumbs, L * H, 'one model-view thumbnail per layer × head');
  assert.equal(v.heads, H, 'one head-view toggle per head');
  assert.equal(v.statsRows, L, 'one head-statistics row per layer');
  assert.ok(v.statsCells.some((c) => /\d/.test(c)), 'the statistics have numbers');
  assert.ok(v.headView.color > 100, `the head view draws coloured lines (${v.headView.color} pixels)`);
  assert.ok(v.firstThumb.ink > 50, 'a thumbnail is drawn');
  // The page's features are the package's: a feature-extraction pipeline over the same bundle in the main thread.
  const ref = await reference('bert-small', 'feature-extraction', text);
  assert.match(v.output, new RegExp(`^${ref.dims[0]} × ${ref.dims[1]} features`));
  assert.ok(ref.qk, 'the engine returns q and k (output_qk)');
  await neuronDrawn(v);
  // Rollout and flow add one block each of the self-attention (one map per layer, and one).
  await page.check('#op-mv-derived');
  assert.equal(await page.$$eval('#op-mv canvas', (c) => c.length), L * H + L + 1);
  // A thumbnail opens its head alone in the head view.
  await page.click('#op-mv canvas >> nth=5');
  assert.equal(await page.$$eval('#op-heads button[aria-pressed=true]', (b) => b.map((x) => x.textContent).join()), String((5 % H) + 1));
  await page.$eval('#op-panels', (e) => e.scrollIntoView());
  await page.screenshot({ path: path.join(ARTIFACTS, 'open-bundle.png'), fullPage: false });
  await page.uncheck('#op-mv-derived');
});

test('a Hugging Face folder dropped on the section is converted in the worker and generates as the bundle does', { skip: BROWSER_SKIP }, async () => {
  await dropFiles(filesOf(path.join('gpt2-tiny', 'hf')));
  const opened = await settled();
  assert.ok(!opened.error, opened.text);
  assert.match(await page.textContent('#op-model'), /hf-gpt2, text-generation\): 2 layers × 4 heads.*converted here/);
  assert.equal(await page.textContent('#op-run'), 'Generate');
  assert.ok(await page.$eval('#op-panels', (e) => e.hidden), 'the views of the model before are gone');
  await page.fill('#op-max', '6');
  await run('Hello world');
  const v = await views();
  const ref = (await reference('gpt2-tiny', 'text-generation', 'Hello world', { max_new_tokens: 6 })).generated_text;
  assert.ok(v.output.startsWith(ref), `page: ${v.output}; bundle: ${ref}`);
  assert.equal(v.thumbs, 2 * 4);
  assert.equal(v.heads, 4);
  await neuronDrawn(v);
  assert.equal(v.statsRows, 2);
  assert.ok(v.headView.color > 50);
});

test('a bad folder gives a clear error and the page keeps working', { skip: BROWSER_SKIP }, async () => {
  // The GPT-2 of the test before is open: files that are no model leave it open and running.
  await pick('#op-files', [path.join(FIX, 'bert-small', 'bundle', 'MODEL_CARD.md')]);
  let s = await settled();
  assert.ok(s.error);
  assert.match(s.text, /no config\.json among the 1 file \(MODEL_CARD\.md\).* is still open\)$/);
  assert.match(await page.textContent('#op-model'), /hf-gpt2/);
  await run('Hello world');
  assert.ok((await page.textContent('#op-output')).startsWith('Hello world'));
  // One of the page's own bundles is not a converted one.
  await pick('#op-files', [path.join(ROOT, 'models', 'pointer-sort', 'config.json')]);
  s = await settled();
  assert.match(s.text, /architecture "[^"]+": this section opens converted Hugging Face bundles/);
  // A Hugging Face config without weights.
  await dropFiles(filesOf(path.join('gpt2-tiny', 'hf'), ['config.json']));
  s = await settled();
  assert.match(s.text, /model_type "gpt2"\) without weights/);
  // The same section opens a good folder afterwards, with int8 on load.
  await page.check('#op-int8');
  await pick('#op-folder', path.join(FIX, 'bert-small', 'bundle'));
  s = await settled();
  assert.ok(!s.error, s.text);
  assert.match(await page.textContent('#op-model'), /int8 in the engine/);
  await run('a fine film');
  assert.equal((await views()).thumbs, 9);
  await page.uncheck('#op-int8');
  assert.deepEqual(problems, []);
});

test('markup typed into the text field is shown as text: no element from it, no script runs', { skip: BROWSER_SKIP }, async () => {
  // GPT-2: the generated text starts with the prompt as typed, so the output line shows the markup itself.
  await dropFiles(filesOf(path.join('gpt2-tiny', 'hf')));
  const opened = await settled();
  assert.ok(!opened.error, opened.text);
  await page.fill('#op-max', '2');
  for (const payload of ['<img src=x onerror="window.__xss=1">', '"><script>window.__xss=1</script>']) {
    await run(payload);
    assert.equal(await page.evaluate(() => typeof window.__xss), 'undefined', `${payload}: no script ran`);
    assert.equal(await page.$$eval('#open img, #open script, #open [onerror]', (e) => e.length), 0, `${payload}: no element from the text`);
    const shown = await page.$$eval('#op-output p, #op-status, #op-model', (els) => els.map((e) => e.children.length));
    assert.ok(shown.length > 2 && shown.every((n) => n === 0), 'the output, status and model lines hold text only');
    assert.ok((await page.textContent('#op-output')).startsWith(payload), 'the prompt is shown as typed');
  }
});


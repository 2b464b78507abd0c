// The 'image-to-text' pipeline (wasm/pipelines/captioning.js over wasm/bindings_captioning.cpp): RGBA pixels →
// caption + attention through the WASM engine against PyTorch (tests/goldens/captioning: a seeded random tiny
// decoder over the real MobileNetV2 bundle models/mobilenet-v2-imagenet; greedy and beam tokens/text and every
// attention map within abs 1e-4), the trained bundles' own goldens when they are exported (and their forced-caption
// goldens: attend() against PyTorch teacher forcing, abs 1e-4), bad images (0×0, 1×1, 8000×8000, grey, fully
// transparent, short buffers), bad captions for attend(), options and dispose().
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { pipeline } from '../../wasm/index.js';
import { assertTensorClose, readSafetensors } from './helpers.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GOLDEN = `${ROOT}tests/goldens/captioning/`;
const ENCODER_DIR = `${ROOT}models/mobilenet-v2-imagenet`;

function rgbaFromTensor(t) {
  const [h, w] = t.dims;
  return { data: Uint8ClampedArray.from(t.data), width: w, height: h };
}

// The tiny test decoder as a preloaded bundle (its encoder is the committed models/mobilenet-v2-imagenet).
function tinyBundle() {
  const dir = `${GOLDEN}tiny-sat/`;
  const configText = readFileSync(`${dir}config.json`, 'utf8');
  return {
    name: 'tiny-sat',
    config: JSON.parse(configText),
    configText,
    files: {
      'weights.safetensors': new Uint8Array(readFileSync(`${dir}weights.safetensors`)),
      'vocab.txt': new Uint8Array(readFileSync(`${dir}vocab.txt`)),
    },
    encoder: ENCODER_DIR,
  };
}

let captionerPromise;
const tiny = () => (captionerPromise ??= pipeline('image-to-text', tinyBundle()));
const golden = JSON.parse(readFileSync(`${GOLDEN}golden.json`, 'utf8'));
const tensors = readSafetensors(`${GOLDEN}golden.safetensors`);

test('tiny decoder over the real encoder: greedy and beam match PyTorch', async () => {
  const caption = await tiny();
  assert.equal(caption.task, 'image-to-text');
  assert.equal(caption.model, 'tiny-sat');
  assert.equal(caption.encoder, 'mobilenet-v2-imagenet');
  for (let i = 0; i < golden.cases.length; i++) {
    const c = golden.cases[i];
    const p = `case${i}/`;
    const img = rgbaFromTensor(tensors[`${p}pixels`]);
    const g = await caption(img, { num_beams: 1 });
    assert.equal(g.text, c.greedy.text, `${c.name} greedy text`);
    assert.equal(g.tokens.length, c.greedy.steps, `${c.name} one token per step`);
    assert.equal(g.attentions.length, 1);
    assert.equal(g.attentions.at(0).name, 'visual');
    assert.deepEqual(Array.from(g.token_ids).slice(0, c.greedy.token_ids.length), c.greedy.token_ids);
    assertTensorClose(g.attentions.at(0), tensors[`${p}greedy/attention`], `${c.name} greedy attention`);
    assertTensorClose({ dims: [g.betas.length], data: g.betas }, tensors[`${p}greedy/beta`], `${c.name} greedy beta`);
    const b = await caption(img); // the bundle's default: 3 beams
    assert.equal(b.num_beams, 3);
    assert.equal(b.text, c.beam.text, `${c.name} beam text`);
    assert.ok(Math.abs(b.score - c.beam.score) <= 1e-3, `${c.name} beam score ${b.score} vs ${c.beam.score}`);
    assertTensorClose(b.attentions.at(0), tensors[`${p}beam/attention`], `${c.name} beam attention`);
    for (let t = 0; t < b.attentions.at(0).dims[0]; t++) {
      let sum = 0;
      for (let k = 0; k < 49; k++) sum += b.attentions.at(0).data[t * 49 + k];
      assert.ok(Math.abs(sum - 1) < 1e-5, `attention row ${t} sums to ${sum}`);
    }
  }
});

test('bad images give a caption or a clear Error', async () => {
  const caption = await tiny();
  const opts = { num_beams: 1, max_new_tokens: 3 };
  await assert.rejects(caption({ data: new Uint8ClampedArray(0), width: 0, height: 0 }, opts), /empty/);
  await assert.rejects(caption({ data: new Uint8ClampedArray(399), width: 10, height: 10 }, opts), /needs exactly 400/);
  await assert.rejects(caption({ data: new Uint8ClampedArray(200), width: 10, height: 10, channels: 2 }, opts), RangeError);
  await assert.rejects(caption({ data: [1, 2, 3, 4], width: 1, height: 1 }, opts), /Uint8ClampedArray or Uint8Array/);
  await assert.rejects(caption({ data: new Uint8ClampedArray(4), width: 1.5, height: 1 }, opts), RangeError);
  await assert.rejects(caption('ftp://example.com/dog.jpg', opts), /attnlens: image-to-text: unsupported URL scheme ftp:/);
  await assert.rejects(caption(42, opts), TypeError);
  await assert.rejects(caption(null, opts), TypeError);
  // 1×1
  const one = await caption({ data: new Uint8ClampedArray([10, 200, 30, 255]), width: 1, height: 1 }, opts);
  assert.ok(one.tokens.length >= 1 && one.tokens.length <= 3);
  assert.deepEqual(one.attentions.at(0).dims, [one.tokens.length, 7, 7]);
  // fully transparent == white
  const clear = new Uint8ClampedArray(16 * 9 * 4);
  for (let i = 0; i < clear.length; i += 4) clear[i] = 77;
  const white = new Uint8ClampedArray(16 * 9 * 4).fill(255);
  assert.equal((await caption({ data: clear, width: 16, height: 9 }, opts)).text,
    (await caption({ data: white, width: 16, height: 9 }, opts)).text);
  // grey: 1 channel == the same picture as RGBA
  const grey = new Uint8Array(30 * 20).map((_, i) => (i * 7) & 255);
  const greyRgba = new Uint8ClampedArray(30 * 20 * 4);
  grey.forEach((g, i) => greyRgba.set([g, g, g, 255], 4 * i));
  const r1 = await caption({ data: grey, width: 30, height: 20, channels: 1 }, opts);
  const r4 = await caption({ data: greyRgba, width: 30, height: 20 }, opts);
  assert.equal(r1.text, r4.text);
  assert.deepEqual(Array.from(r1.attentions.at(0).data), Array.from(r4.attentions.at(0).data));
  // 8000×8000 RGBA (256 MB in JS): captioned without copying the image into the WASM heap
  const big = new Uint8ClampedArray(8000 * 8000 * 4);
  for (let i = 0; i < big.length; i += 4099) big[i] = 200;
  const rb = await caption({ data: big, width: 8000, height: 8000 }, opts);
  assert.ok(rb.tokens.length >= 1);
  await assert.rejects(caption({ data: new Uint8ClampedArray(4 * 70000), width: 70000, height: 1 }, opts), /too large/);
  // arrays of images
  const many = await caption([{ data: white, width: 16, height: 9 }, { data: greyRgba, width: 30, height: 20 }], opts);
  assert.equal(many.length, 2);
});

test('options and dispose', async () => {
  const caption = await pipeline('image-to-text', tinyBundle());
  const img = { data: new Uint8ClampedArray(8 * 8 * 4).fill(120), width: 8, height: 8 };
  await assert.rejects(caption(img, { num_beam: 2 }), (e) => e instanceof TypeError && /num_beam/.test(e.message));
  await assert.rejects(caption(img, { num_beams: 0 }), RangeError);
  await assert.rejects(caption(img, { max_new_tokens: 1.5 }), RangeError);
  await assert.rejects(caption(img, { output_attentions: 'yes' }), TypeError);
  await assert.rejects(caption(img, { allow_unk: 1 }), (e) => e instanceof TypeError && /allow_unk/.test(e.message));
  const r = await caption(img, { output_attentions: false, max_new_tokens: 2 });
  assert.equal(r.attentions.length, 0);
  assert.ok(r.tokens.length <= 2);
  const grid = caption.encode(img);
  assert.ok(grid instanceof Float32Array);
  assert.equal(grid.length, 7 * 7 * 1280);
  assert.equal(caption.captionGrid(grid, { num_beams: 1, max_new_tokens: 2 }).text,
    (await caption(img, { num_beams: 1, max_new_tokens: 2 })).text);
  await assert.rejects(pipeline('image-to-text', tinyBundle(), { beams: 2 }), TypeError);
  const noEncoder = tinyBundle();
  delete noEncoder.encoder;
  await assert.rejects(pipeline('image-to-text', noEncoder), /encoder bundle/);
  caption.dispose();
  assert.equal(caption.disposed, true);
  await assert.rejects(caption(img), /disposed/);
  caption.dispose(); // twice is fine
});

for (const name of ['flickr8k-mobilenet', 'shapes']) {
  const dir = `${ROOT}models/${name}/`;
  const exported = existsSync(`${dir}golden.json`);
  test(`${name}: the bundle matches its PyTorch goldens`, { skip: exported ? false : 'bundle not exported yet' }, async () => {
    const meta = JSON.parse(readFileSync(`${dir}golden.json`, 'utf8'));
    const g = readSafetensors(`${dir}golden.safetensors`);
    const caption = await pipeline('image-to-text', name);
    const forced = existsSync(`${dir}golden_forced.json`)
      ? { meta: JSON.parse(readFileSync(`${dir}golden_forced.json`, 'utf8')), t: readSafetensors(`${dir}golden_forced.safetensors`) }
      : null;
    for (let i = 0; i < meta.cases.length; i++) {
      const c = meta.cases[i];
      const p = `case${i}/`;
      let img;
      if (c.pixels_ppm) {
        const buf = readFileSync(`${ROOT}${c.pixels_ppm}`);
        const header = buf.subarray(0, 20).toString('latin1').split(/\s+/);
        const [w, h] = [Number(header[1]), Number(header[2])];
        const rgb = buf.subarray(buf.length - w * h * 3);
        img = { data: new Uint8Array(rgb), width: w, height: h, channels: 3 };
      } else {
        img = rgbaFromTensor(g[`${p}pixels`]);
      }
      // the reference search (sat.py) may choose <unk>: allow_unk reproduces it
      const gr = await caption(img, { num_beams: 1, allow_unk: true });
      assert.equal(gr.text, c.greedy.text, `${name} ${c.name} greedy`);
      assertTensorClose(gr.attentions.at(0), g[`${p}greedy/attention`], `${name} ${c.name} greedy attention`);
      const b = await caption(img, { num_beams: c.beam.num_beams, allow_unk: true });
      assert.equal(b.text, c.beam.text, `${name} ${c.name} beam`);
      assertTensorClose(b.attentions.at(0), g[`${p}beam/attention`], `${name} ${c.name} beam attention`);
      // by default <unk> is never emitted (the flickr8k cat golden says "... sitting on a <unk> ."): greedy follows
      // the golden caption up to its first <unk> and takes the best other word of the golden logits there
      const unk = 3;
      const gd = await caption(img, { num_beams: 1 });
      const bd = await caption(img, { num_beams: c.beam.num_beams });
      assert.ok(!gd.tokens.includes('<unk>') && !bd.tokens.includes('<unk>'), `${name} ${c.name}: <unk> emitted`);
      const at = c.greedy.token_ids.indexOf(unk);
      if (at < 0) {
        assert.equal(gd.text, c.greedy.text);
      } else {
        assert.deepEqual(Array.from(gd.token_ids).slice(0, at), c.greedy.token_ids.slice(0, at));
        const logits = g[`${p}greedy/logits`].data;
        const V = logits.length / g[`${p}greedy/logits`].dims[0];
        let best = -1;
        for (let v = 0; v < V; v++) if (v !== unk && (best < 0 || logits[at * V + v] > logits[at * V + best])) best = v;
        assert.equal(gd.token_ids[at], best, `${name} ${c.name}: the best word other than <unk>`);
      }
      // forced captions (attend) against PyTorch teacher forcing (forced_goldens.py), abs <= 1e-4
      if (!forced) continue;
      const fc = forced.meta.cases[i];
      assert.equal(fc.name, c.name);
      for (let k = 0; k < fc.forced.length; k++) {
        const f = fc.forced[k];
        const fp = `${p}forced${k}/`;
        const label = `${name} ${c.name} forced ${JSON.stringify(f.caption)}`;
        const r = await caption.attend(img, f.caption);
        assert.deepEqual(Array.from(r.token_ids), f.token_ids, `${label} ids`);
        assert.equal(r.tokens.length, f.steps);
        assert.equal(r.forced, true);
        assert.equal(r.num_beams, 0);
        assert.equal(r.text, f.words.join(' '));
        assert.deepEqual(r.unknown_words, f.unknown_words, `${label} unknown words`);
        for (const u of r.unknown_words) assert.equal(r.tokens[u.position], '<unk>');
        assert.ok(maxAbsDiff(r.token_logprobs, forced.t[`${fp}logprobs`].data) <= 1e-4, `${label} logprobs`);
        assert.ok(maxAbsDiff(r.attentions.at(0).data, forced.t[`${fp}attention`].data) <= 1e-4, `${label} attention`);
        assert.deepEqual(r.attentions.at(0).dims, forced.t[`${fp}attention`].dims);
        assert.ok(maxAbsDiff(r.betas, forced.t[`${fp}beta`].data) <= 1e-4, `${label} beta`);
        assert.ok(Math.abs(r.score - f.score) <= 1e-3, `${label} score ${r.score} vs ${f.score}`);
      }
    }
    caption.dispose();
  });
}

// max |a − e| over two equally long arrays (Infinity when the lengths differ).
function maxAbsDiff(a, e) {
  if (a.length !== e.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < e.length; i++) worst = Math.max(worst, Math.abs(a[i] - e[i]));
  return worst;
}

test('attend: forced captions on the tiny decoder — consistency with greedy, unknown words and bad input', async () => {
  const caption = await tiny();
  const img = { data: new Uint8ClampedArray(20 * 12 * 4).map((_, i) => (i * 37) % 251), width: 20, height: 12 };
  // forcing the greedy caption gives greedy's steps back
  const g = await caption(img, { num_beams: 1 });
  if (g.finished && g.text) {
    const f = await caption.attend(img, g.text);
    assert.deepEqual(f.tokens, g.tokens);
    assert.deepEqual(Array.from(f.attentions.at(0).data), Array.from(g.attentions.at(0).data));
    assert.deepEqual(Array.from(f.betas), Array.from(g.betas));
    assert.ok(Math.abs(f.score - g.score) <= 1e-4);
  }
  // the training split and <unk>
  const r = await caption.attend(img, 'Two DOGS run: on the grass.');
  assert.equal(r.text, 'two dogs run : on the grass .');
  assert.deepEqual(r.tokens, ['two', '<unk>', '<unk>', '<unk>', 'on', 'the', 'grass', '.', '<end>']);
  assert.deepEqual(r.unknown_words, [{ word: 'dogs', position: 1 }, { word: 'run', position: 2 }, { word: ':', position: 3 }]);
  assert.ok(r.token_logprobs instanceof Float32Array);
  assert.equal(r.token_logprobs.length, r.tokens.length);
  assert.deepEqual(r.attentions.at(0).dims, [r.tokens.length, 7, 7]);
  assert.ok(Math.abs(r.token_logprobs.reduce((a, b) => a + b, 0) - r.score) <= 1e-3);
  const noMaps = await caption.attend(img, 'Two DOGS run: on the grass.', { output_attentions: false });
  assert.equal(noMaps.attentions.length, 0);
  assert.deepEqual(Array.from(noMaps.token_logprobs), Array.from(r.token_logprobs));
  // a lone surrogate becomes U+FFFD, an unknown word
  const s = await caption.attend(img, 'a \uD800');
  assert.deepEqual(s.unknown_words, [{ word: '\uFFFD', position: 1 }]);
  // bad captions
  await assert.rejects(caption.attend(img, ''), /caption is empty/);
  await assert.rejects(caption.attend(img, '  \n'), /caption is empty/);
  await assert.rejects(caption.attend(img, 42), (e) => e instanceof TypeError && /caption must be a string/.test(e.message));
  await assert.rejects(caption.attend(img, undefined), TypeError);
  await assert.rejects(caption.attend(img, 'a '.repeat(1001)), /more than 1000 words/);
  const long = await caption.attend(img, 'a dog '.repeat(100)); // 200 words: defined, finite
  assert.equal(long.tokens.length, 201);
  assert.ok(long.token_logprobs.every(Number.isFinite));
  // options: only output_attentions
  await assert.rejects(caption.attend(img, 'a dog', { num_beams: 2 }), (e) => e instanceof TypeError && /num_beams/.test(e.message));
  await assert.rejects(caption.attend(img, 'a dog', { output_attentions: 1 }), TypeError);
  // images: 0×0 refused, 1×1 fine, an all-black image gives finite numbers
  await assert.rejects(caption.attend({ data: new Uint8ClampedArray(0), width: 0, height: 0 }, 'a dog'), /empty/);
  const one = await caption.attend({ data: new Uint8ClampedArray([10, 200, 30, 255]), width: 1, height: 1 }, 'a dog');
  assert.equal(one.tokens.length, 3);
  const black = new Uint8ClampedArray(64 * 48 * 4);
  for (let i = 3; i < black.length; i += 4) black[i] = 255;
  const rb = await caption.attend({ data: black, width: 64, height: 48 }, 'a dog runs on the grass');
  assert.ok(Number.isFinite(rb.score));
  for (const arr of [rb.token_logprobs, rb.betas, rb.attentions.at(0).data]) assert.ok(arr.every(Number.isFinite));
});

// The browser-only inputs (HTMLImageElement, Blob, object URL → createImageBitmap → OffscreenCanvas) in headless
// Chromium (TOOLCHAIN.md), against ImageData of the same opaque pixels, and against Node on those pixels.
test('browser inputs: ImageData, image element, Blob and URL give the same caption', { timeout: 120_000 }, async (t) => {
  const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (process.env.ATTNLENS_SKIP_BROWSER === '1' || !existsSync(CHROMIUM)) {
    t.skip(process.env.ATTNLENS_SKIP_BROWSER === '1' ? 'ATTNLENS_SKIP_BROWSER=1' : `${CHROMIUM} is missing`);
    return;
  }
  const { chromium } = await import('playwright-core');
  const { serve } = await import('../../scripts/serve.mjs');
  const os = await import('node:os');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { server, url } = await serve(ROOT.replace(/\/$/, ''), { port: 0 });
  const profile = mkdtempSync(`${os.tmpdir()}/attnlens-chromium-`);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const problems = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('response', (res) => { if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`); });
    await page.goto(url);
    const dir = `${GOLDEN}tiny-sat/`;
    const out = await page.evaluate(async ({ configText, weightsB64, vocabText }) => {
      const { pipeline } = await import('/wasm/index.js');
      const bytes = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
      const caption = await pipeline('image-to-text', {
        name: 'tiny-sat', config: JSON.parse(configText), configText,
        files: { 'weights.safetensors': bytes(weightsB64), 'vocab.txt': new TextEncoder().encode(vocabText) },
        encoder: '/models/mobilenet-v2-imagenet/',
      });
      const canvas = document.createElement('canvas');
      canvas.width = 37;
      canvas.height = 23;
      const ctx = canvas.getContext('2d');
      ctx.fillStyle = '#3a7bd5';
      ctx.fillRect(0, 0, 37, 23);
      ctx.fillStyle = '#e94e1b';
      ctx.fillRect(5, 3, 14, 11);
      ctx.fillStyle = '#2e8b57';
      ctx.fillRect(20, 12, 15, 9);
      const imageData = ctx.getImageData(0, 0, 37, 23);
      const opts = { num_beams: 1, max_new_tokens: 6 };
      const fromData = await caption(imageData, opts);
      const img = new Image();
      img.src = canvas.toDataURL('image/png');
      const fromElement = await caption(img, opts);
      const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
      const fromBlob = await caption(blob, opts);
      const fromUrl = await caption(URL.createObjectURL(blob), opts);
      let badUrl = null;
      try {
        await caption('/models/no-such-image.png', opts);
      } catch (err) {
        badUrl = err.message;
      }
      caption.dispose();
      const pack = (r) => ({ text: r.text, dims: r.attentions.at(0).dims, att: Array.from(r.attentions.at(0).data) });
      return { pixels: Array.from(imageData.data), fromData: pack(fromData), fromElement: pack(fromElement),
        fromBlob: pack(fromBlob), fromUrl: pack(fromUrl), badUrl };
    }, {
      configText: readFileSync(`${dir}config.json`, 'utf8'),
      weightsB64: readFileSync(`${dir}weights.safetensors`).toString('base64'),
      vocabText: readFileSync(`${dir}vocab.txt`, 'utf8'),
    });
    for (const k of ['fromElement', 'fromBlob', 'fromUrl']) {
      assert.equal(out[k].text, out.fromData.text, k);
      assert.deepEqual(out[k].att, out.fromData.att, `${k} attention`);
    }
    assert.match(out.badUrl, /HTTP 404/);
    const node = await (await tiny())({ data: Uint8ClampedArray.from(out.pixels), width: 37, height: 23 },
      { num_beams: 1, max_new_tokens: 6 });
    assert.equal(node.text, out.fromData.text);
    assertTensorClose({ dims: out.fromData.dims, data: Float32Array.from(out.fromData.att) }, node.attentions.at(0),
      'browser vs Node attention');
    assert.deepEqual(problems.filter((p) => !p.includes('no-such-image')), []);
  } finally {
    await context.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
});

// Load through the page's inference worker (issue 19, item 7), in headless Chromium: 1,000 consecutive requests
// (sentiment with both models, translation greedy / beam / without maps, forced alignment, captioning, an array
// input, and invalid ones: wrong types, bad options, text the engine refuses, an unknown task, a missing model,
// an image whose bytes do not match its size) each get the right answer — the package's own result for the same
// input in Node (the same WASM engine), or the right error — and the worker's WebAssembly heap ends where it was
// after the warm-up (memoryStats() through the worker's 'memory' request: usedBytes exactly, heapBytes within 1 %).
// Then a burst of concurrent requests (several on one pipeline at once) gives the same answers: the pipeline
// queues them (wasm/pipeline.js), nothing interleaves. Requests go through client.js as the demos send them
// (window.attnlensTestHooks.call on a page opened with ?test-hooks=1). ATTNLENS_LOAD_REQUESTS changes the count.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve } from '../../scripts/serve.mjs';
import { BROWSER_SKIP, ROOT, hasBundle, launch } from './helpers.mjs';

const MODELS = ['sst2-selfattn', 'sst2-relation', 'de-en-general', 'shapes'];
const skip = BROWSER_SKIP || (MODELS.some((m) => !hasBundle(m)) ? `needs the bundles ${MODELS.join(', ')}` : false);

const REQUESTS = Number(process.env.ATTNLENS_LOAD_REQUESTS || 1000);
const WARMUP = 100;

// An image is described by { image: [width, height, channels, seed], bytes? } and made in the page and in Node alike.
const IMG = (w, h, c, seed, bytes) => ({ image: [w, h, c, seed], ...(bytes === undefined ? {} : { bytes }) });

// The request kinds, cycled through in this order. `expect`: 'same' (the Node result) or a RegExp for the error.
const KINDS = [
  { type: 'run', task: 'sentiment-analysis', model: 'sst2-selfattn', input: "it 's a charming and often affecting journey ." },
  { type: 'run', task: 'translation', model: 'de-en-general', input: 'Ein Hund rennt über die Wiese.', options: { num_beams: 1 } },
  { type: 'run', task: 'sentiment-analysis', model: 'sst2-selfattn', input: 42, expect: /input must be a string/ },
  { type: 'run', task: 'sentiment-analysis', model: 'sst2-relation', input: 'unflinchingly bleak and desperate' },
  { type: 'run', task: 'image-to-text', model: 'shapes', input: IMG(40, 30, 4, 1), options: { num_beams: 1 } },
  { type: 'run', task: 'translation', model: 'de-en-general', input: 'Zwei Kinder spielen.', options: { num_beams: 0 }, expect: /num_beams/ },
  { type: 'run', task: 'translation', model: 'de-en-general', input: 'Ich habe keine Zeit.', options: { num_beams: 4 } },
  { type: 'run', task: 'sentiment-analysis', model: 'sst2-selfattn', input: '   ', expect: /empty input/ },
  { type: 'align', task: 'translation', model: 'de-en-general', source: 'Ein Hund rennt.', target: 'A dog runs.' },
  { type: 'run', task: 'sentiment-analysis', model: 'sst2-selfattn', input: ['a masterpiece', 'a mess'], options: { output_attentions: false } },
  { type: 'run', task: 'no-such-task', model: 'x', input: 'x', expect: /unknown task/ },
  { type: 'run', task: 'translation', model: 'de-en-general', input: 'Eine Frau liest. Ein Mann schläft.', options: { num_beams: 1, output_attentions: false } },
  { type: 'align', task: 'translation', model: 'de-en-general', source: 'Ein Hund.', target: 'A dog.', options: { alignment_layer: 99 }, expect: /alignment layer/ },
  { type: 'run', task: 'image-to-text', model: 'shapes', input: IMG(16, 16, 3, 2), options: { num_beams: 3 } },
  { type: 'run', task: 'image-to-text', model: 'shapes', input: IMG(16, 16, 4, 3, 100), expect: /needs exactly 1024/ },
  { type: 'run', task: 'translation', model: 'de-en-general', input: 'Ein Hund.', options: { bogus: 1 }, expect: /unknown translation option "bogus"/ },
  { type: 'run', task: 'sentiment-analysis', model: 'no-such-model', input: 'x', expect: /404|not found/i },
];

// The comparable part of a result (the same function runs in the page: keep the two in step).
function summary(o) {
  if (Array.isArray(o)) return o.map(summary);
  if (o.label !== undefined) return { label: o.label, score: o.score, tokens: o.tokens, maps: o.attentions.length };
  return { text: o.text, tokens: o.target_tokens ?? o.tokens, maps: o.attentions.length };
}
function makeImage([w, h, c, seed], bytes) {
  const data = new Uint8ClampedArray(bytes ?? w * h * c);
  for (let i = 0; i < data.length; i++) data[i] = (i * (5 + seed) + ((i / (w * c)) | 0) * 9 * seed) & 255;
  return { data, width: w, height: h, channels: c };
}

let server;
let browser;
let tab;
const expected = [];

before(async () => {
  if (skip) return;
  // The answers, from the package in Node.
  const { pipeline } = await import('../../wasm/index.js');
  const pipes = new Map();
  for (const k of KINDS) {
    if (k.expect) {
      expected.push(null);
      continue;
    }
    const key = `${k.task}|${k.model}`;
    if (!pipes.has(key)) pipes.set(key, await pipeline(k.task, k.model));
    const p = pipes.get(key);
    const input = k.input?.image ? makeImage(k.input.image, k.input.bytes) : k.input;
    expected.push(summary(k.type === 'align' ? await p.align(k.source, k.target, k.options) : await p(input, k.options)));
  }
  for (const p of pipes.values()) p.dispose();

  let url;
  ({ server, url } = await serve(ROOT, { port: 0 }));
  browser = await launch({ width: 1280, height: 700 });
  tab = browser.context.pages()[0] ?? (await browser.context.newPage());
  await tab.goto(`${url}?test-hooks=1`);
  await tab.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });
  // The page translates its first example at load: let it finish, so that only this test's requests run.
  await tab.waitForFunction(() => {
    const s = document.getElementById('tr-status');
    return /\d ms$/.test(s.textContent.trim()) || s.classList.contains('error');
  }, null, { timeout: 120_000 });
});

after(async () => {
  if (browser) await browser.close();
  server?.close();
});

// Sends requests [from, to) of the cycle one after the other (or all at once: `burst`) from the page; returns, for
// each, { ok: summary } or { error, missing, crashed }, and the worker's memoryStats() at the end.
function send(from, to, { burst = false } = {}) {
  return tab.evaluate(async ({ kinds, from, to, burst }) => {
    const H = window.attnlensTestHooks;
    const summary = (o) => {
      if (Array.isArray(o)) return o.map(summary);
      if (o.label !== undefined) return { label: o.label, score: o.score, tokens: o.tokens, maps: o.attentions.length };
      return { text: o.text, tokens: o.target_tokens ?? o.tokens, maps: o.attentions.length };
    };
    const makeImage = ([w, h, c, seed], bytes) => {
      const data = new Uint8ClampedArray(bytes ?? w * h * c);
      for (let i = 0; i < data.length; i++) data[i] = (i * (5 + seed) + ((i / (w * c)) | 0) * 9 * seed) & 255;
      return { data, width: w, height: h, channels: c };
    };
    const one = async (i) => {
      const k = kinds[i % kinds.length];
      const payload = k.type === 'align'
        ? { task: k.task, model: k.model, source: k.source, target: k.target, options: k.options }
        : { task: k.task, model: k.model, input: k.input?.image ? makeImage(k.input.image, k.input.bytes) : k.input, options: k.options };
      try {
        return { ok: summary((await H.call(k.type, payload)).output) };
      } catch (err) {
        return { error: err.message, missing: err.missing, crashed: err.crashed };
      }
    };
    const out = [];
    if (burst) {
      out.push(...await Promise.all(Array.from({ length: to - from }, (_, j) => one(from + j))));
    } else {
      for (let i = from; i < to; i++) out.push(await one(i));
    }
    return { out, memory: await H.call('memory') };
  }, { kinds: KINDS.map((k) => ({ ...k, expect: undefined })), from, to, burst });
}

function check(results, from) {
  let wrong = 0;
  const problems = [];
  results.forEach((r, j) => {
    const i = from + j;
    const k = KINDS[i % KINDS.length];
    const want = expected[i % KINDS.length];
    let ok;
    if (k.expect) {
      ok = r.error !== undefined && k.expect.test(r.error) && !r.crashed;
    } else {
      ok = r.ok !== undefined;
      if (ok) {
        const a = [r.ok].flat();
        const b = [want].flat();
        ok = a.length === b.length && a.every((x, n) => x.label === b[n].label && x.text === b[n].text &&
          JSON.stringify(x.tokens) === JSON.stringify(b[n].tokens) && x.maps === b[n].maps &&
          (x.score === undefined || Math.abs(x.score - b[n].score) <= 1e-6));
      }
    }
    if (!ok) {
      wrong += 1;
      if (problems.length < 5) problems.push(`request ${i} (${k.type} ${k.task} ${k.model}): ${JSON.stringify(r).slice(0, 300)}`);
    }
  });
  return { wrong, problems };
}

test(`${REQUESTS} consecutive requests through the worker: right answers, right errors, a flat WebAssembly heap`, { skip, timeout: 30 * 60_000 }, async () => {
  const warm = await send(0, WARMUP);
  const w = check(warm.out, 0);
  assert.equal(w.wrong, 0, w.problems.join('\n'));
  const before = warm.memory;
  const series = [before.usedBytes];
  let at = WARMUP;
  let wrong = 0;
  const problems = [];
  let last = before;
  while (at < WARMUP + REQUESTS) {
    const to = Math.min(at + 100, WARMUP + REQUESTS);
    const r = await send(at, to);
    const c = check(r.out, at);
    wrong += c.wrong;
    problems.push(...c.problems);
    series.push(r.memory.usedBytes);
    last = r.memory;
    at = to;
  }
  assert.equal(wrong, 0, `${wrong} of ${REQUESTS} requests answered wrongly:\n${problems.slice(0, 10).join('\n')}`);
  const what = `worker usedBytes every 100 requests: ${series.join(', ')}; heapBytes ${before.heapBytes} → ${last.heapBytes}`;
  console.log(`${REQUESTS} requests; ${what}`);
  assert.ok(Math.abs(last.usedBytes - before.usedBytes) <= 0.01 * before.usedBytes, `${what}: more than ±1 %`);
  assert.equal(last.usedBytes, before.usedBytes, `${what}: the heap must come back exactly`);
  assert.ok(last.heapBytes <= before.heapBytes * 1.01, `${what}: the WebAssembly memory grew by more than 1 %`);
});

test('a burst of concurrent requests (several on one pipeline at once) gets the same answers', { skip, timeout: 10 * 60_000 }, async () => {
  const n = 3 * KINDS.length;
  const r = await send(0, n, { burst: true });
  const c = check(r.out, 0);
  assert.equal(c.wrong, 0, c.problems.join('\n'));
  assert.ok(r.out.every((x) => !x.crashed), 'no restart');
});

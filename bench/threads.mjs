#!/usr/bin/env node
// One thread against several, in the threaded module (wasm/dist-mt/, kernels/parallel.h), in one Node process: the
// same pipelines, the same inputs, rounds alternating which thread count goes first (setThreads()); the median over
// rounds of items per wall-clock second (threads use more CPU time, so CPU time would hide the gain), and the ratio
// of the medians. Also checks that every result is the same, maps included, bit for bit.
//
//   node bench/threads.mjs [--threads 2] [--rounds 5] [--n 40] [--n-beam 12] [--images 6] [--only encoder,list]
//       [--precision f32|int8]   (the pipelines' `precision` option; default: each bundle's own)
//
// --only keeps the workloads whose name contains one of the given words.
//
// Workloads: a list of N Multi30k test_2016_flickr sentences translated in one call (de-en-general, greedy and
// beam 4, every map), the same sentences one call each, the caption encoder (MobileNetV2, 224² after resize) on
// synthetic 320×240 images, and those images captioned as one list (flickr8k-mobilenet, greedy); also one call per
// sentence of de-en-rnn-general and sst2-selfattn, whose bidirectional encoders run their directions side by side. Run it on an otherwise idle machine: a busy core halves what a thread can add.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

import { syntheticImage } from './synthetic.mjs';
import { init, info, pipeline, setThreads } from '../wasm/index.js';
import { options } from '../scripts/args.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const opt = options(process.argv.slice(2));
const arg = opt.get;
const THREADS = Number(arg('--threads', 2));
const ROUNDS = Number(arg('--rounds', 5));
const N = Number(arg('--n', 40));
const N_BEAM = Number(arg('--n-beam', 12));
const IMAGES = Number(arg('--images', 6));
const ONLY = arg('--only', '').split(',').filter(Boolean);
const LOAD = opt.has('--precision') ? { precision: arg('--precision', 'f32') } : {};

await init({ threads: THREADS });
const started = info();
if (!started.threaded || started.threads !== THREADS) {
  console.error(`bench/threads: the threaded module did not start with ${THREADS} threads (${JSON.stringify(started)}); ` +
    'build it with `npm run build:wasm`');
  process.exit(1);
}

const data = path.join(ROOT, '..', 'shared', 'data', 'multi30k', 'test_2016_flickr.de.gz');
const sentences = gunzipSync(readFileSync(data)).toString('utf8').split('\n').filter((l) => l.trim());
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Every number and string of a result, maps included, as one comparable list.
function fingerprint(value, out = []) {
  if (value instanceof Float32Array || value instanceof Int32Array || Array.isArray(value)) {
    for (const v of value) fingerprint(v, out);
  } else if (value !== null && typeof value === 'object') {
    for (const k of Object.keys(value).sort()) {
      out.push(k);
      fingerprint(value[k], out);
    }
  } else {
    out.push(Object.is(value, -0) ? '-0' : String(value));
  }
  return out;
}

const translator = await pipeline('translation', 'de-en-general', LOAD);
const rnn = await pipeline('translation', 'de-en-rnn-general', LOAD);
const sentiment = await pipeline('sentiment-analysis', 'sst2-selfattn', LOAD);
const captioner = await pipeline('image-to-text', 'flickr8k-mobilenet', LOAD);
const images = Array.from({ length: IMAGES }, (_, i) => syntheticImage(i));
const workloads = [
  { name: 'translation, list of {n} in one call, greedy, every map', items: N,
    run: () => translator(sentences.slice(0, N), { num_beams: 1 }) },
  { name: 'translation, list of {n} in one call, beam 4, every map', items: N_BEAM,
    run: () => translator(sentences.slice(0, N_BEAM), { num_beams: 4 }) },
  { name: 'translation, one call per sentence, greedy, every map', items: N,
    run: async () => {
      const out = [];
      for (const s of sentences.slice(0, N)) out.push(await translator(s, { num_beams: 1 }));
      return out;
    } },
  { name: 'RNN translation (de-en-rnn-general), one call per sentence, greedy, every map', items: N / 2,
    run: async () => {
      const out = [];
      for (const s of sentences.slice(0, N / 2)) out.push(await rnn(s, { num_beams: 1 }));
      return out;
    } },
  { name: 'sentiment (sst2-selfattn), one call per sentence', items: N * 5,
    run: async () => {
      const out = [];
      for (const s of sentences.slice(0, N * 5)) out.push(await sentiment(s));
      return out;
    } },
  { name: 'caption encoder (MobileNetV2), one image per call', items: IMAGES,
    run: () => images.map((im) => captioner.encode(im)) },
  { name: 'captions, list of {n} images in one call, greedy, every map', items: IMAGES,
    run: () => captioner(images, { num_beams: 1 }) },
];

const rows = [];
for (const w of workloads.filter((x) => ONLY.length === 0 || ONLY.some((word) => x.name.includes(word)))) {
  const results = {};
  for (const t of [1, THREADS]) { // warm-up, and the results to compare
    setThreads(t);
    results[t] = fingerprint(await w.run());
  }
  const same = results[1].length === results[THREADS].length && results[1].every((v, i) => v === results[THREADS][i]);
  delete results[1]; // the fingerprints (a string per map value) would otherwise stay alive through the timed rounds
  delete results[THREADS];
  const samples = { 1: [], [THREADS]: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const t of r % 2 === 0 ? [1, THREADS] : [THREADS, 1]) {
      setThreads(t);
      const t0 = performance.now();
      await w.run();
      samples[t].push(w.items / ((performance.now() - t0) / 1000));
    }
  }
  const row = { workload: w.name.replace('{n}', String(w.items)), one: median(samples[1]), many: median(samples[THREADS]), same };
  row.ratio = row.many / row.one;
  rows.push(row);
  console.error(JSON.stringify(row));
}
for (const p of [translator, rnn, sentiment, captioner]) p.dispose();

console.log(`| workload | 1 thread, items/s | ${THREADS} threads, items/s | ratio | same results |`);
console.log('|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.workload} | ${r.one.toFixed(1)} | ${r.many.toFixed(1)} | **${r.ratio.toFixed(2)}×** | ${r.same ? 'yes' : '**no**'} |`);
}
console.log(`\nMedian of ${ROUNDS} rounds of wall-clock time, one process, thread counts alternating; threaded module ` +
  `(wasm/dist-mt/)${LOAD.precision ? `, precision ${LOAD.precision}` : ''}; node ${process.version}; ${new Date().toISOString()}`);
if (rows.some((r) => !r.same)) process.exit(1);

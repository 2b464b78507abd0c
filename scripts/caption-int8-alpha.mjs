#!/usr/bin/env node
// How far an int8 captioner's attention moves from its float32 original: max and mean |α_int8 − α_float32| over the
// four sanity images of tests/goldens/captioning/sanity, each with two forced captions (a fixed one and the float32
// model's own default caption), through the npm package's pipeline (WASM). The README's int8 paragraph quotes its
// figures for the shipped captioner; rerun it when the captioner or its int8 codes change.
//
// Needs wasm/dist (node scripts/build.mjs wasm) and the int8 bundles, made by scripts/quantize.mjs:
//   node scripts/quantize.mjs models/flickr8k-mobilenet /tmp/int8/flickr8k-mobilenet
//   node scripts/quantize.mjs models/flickr8k-mobilenet-encoder /tmp/int8/flickr8k-mobilenet-encoder
//   node scripts/caption-int8-alpha.mjs [FLOAT_BUNDLE] [INT8_BUNDLE]   (defaults: flickr8k-mobilenet, /tmp/int8/flickr8k-mobilenet)
//
// Output: one line on stdout, nothing written to disk:
//   INT8_BUNDLE against FLOAT_BUNDLE: |alpha difference| max M, mean A over N weights
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { readPpm } from './ppm.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { pipeline } = await import(path.join(ROOT, 'wasm', 'index.js'));
const [floatBundle = 'flickr8k-mobilenet', int8Bundle = '/tmp/int8/flickr8k-mobilenet'] = process.argv.slice(2);

const f = await pipeline('image-to-text', floatBundle);
const q = await pipeline('image-to-text', int8Bundle);
let max = 0;
let sum = 0;
let n = 0;
try {
  for (const name of ['cat', 'hot_dog', 'owl', 'parrot']) {
    const img = readPpm(path.join(ROOT, 'tests', 'goldens', 'captioning', 'sanity', `${name}.ppm`));
    for (const caption of ['a dog runs through the grass .', (await f(img)).text]) {
      const x = (await q.attend(img, caption)).attentions.at(0).data;
      const y = (await f.attend(img, caption)).attentions.at(0).data;
      if (x.length !== y.length) throw new Error(`${name}: ${x.length} against ${y.length} attention weights`);
      for (let i = 0; i < x.length; i++) {
        const d = Math.abs(x[i] - y[i]);
        max = Math.max(max, d);
        sum += d;
        n++;
      }
    }
  }
} finally {
  f.dispose();
  q.dispose();
}
console.log(`${int8Bundle} against ${floatBundle}: |alpha difference| max ${max.toFixed(4)}, mean ${(sum / n).toFixed(5)} over ${n} weights`);

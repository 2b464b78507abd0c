#!/usr/bin/env node
// float32 against int8 step weights (pipeline option `precision`, docs/DESIGN.md §4.3), in one Node process: the
// same translator loaded twice, the same sentences, rounds alternating which precision goes first; the median over
// rounds of sentences per process-CPU second, and the ratio of the medians (int8 / float32). Also counts how many
// outputs are the same text.
//
//   node bench/precision.mjs [--models de-en-general,de-en-rnn-general] [--rounds 5] [--n 40] [--n-beam 10]
//
// Sentences: the first N of Multi30k test_2016_flickr (../shared/data). Speed numbers come from benchmarks like
// this one, never from timed unit tests (docs/DESIGN.md §12).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

import { init, pipeline } from '../wasm/index.js';
import { options } from '../scripts/args.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const opt = options(process.argv.slice(2));
const arg = opt.get;
const MODELS = arg('--models', 'de-en-general').split(',');
const ROUNDS = Number(arg('--rounds', 5));
const N = Number(arg('--n', 40));
const N_BEAM = Number(arg('--n-beam', 10));

const data = path.join(ROOT, '..', 'shared', 'data', 'multi30k', 'test_2016_flickr.de.gz');
const sentences = gunzipSync(readFileSync(data)).toString('utf8').split('\n').filter((l) => l.trim());
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

await init({ threads: 1 }); // the single-threaded module: CPU time per sentence compares like for like
const rows = [];
for (const model of MODELS) {
  const engines = { f32: await pipeline('translation', model, { precision: 'f32' }),
    int8: await pipeline('translation', model, { precision: 'int8' }) };
  const workloads = [];
  for (const beams of [1, 4]) {
    for (const maps of [false, true]) {
      workloads.push({ beams, maps, lines: sentences.slice(0, beams === 1 ? N : N_BEAM) });
    }
  }
  for (const w of workloads) {
    const opts = { num_beams: w.beams, output_attentions: w.maps, copy_numbers: false };
    const texts = {};
    for (const p of ['f32', 'int8']) texts[p] = [];
    for (const s of w.lines) for (const p of ['f32', 'int8']) texts[p].push((await engines[p](s, opts)).text); // warm-up
    const samples = { f32: [], int8: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const p of r % 2 === 0 ? ['f32', 'int8'] : ['int8', 'f32']) {
        const t0 = cpuMs();
        for (const s of w.lines) await engines[p](s, opts);
        samples[p].push(w.lines.length / ((cpuMs() - t0) / 1000));
      }
    }
    const same = texts.f32.filter((t, i) => t === texts.int8[i]).length;
    const row = { model, workload: `${w.beams === 1 ? 'greedy' : `beam ${w.beams}`}, ${w.maps ? 'every map' : 'no maps'}`,
      sentences: w.lines.length, f32: median(samples.f32), int8: median(samples.int8), same };
    row.ratio = row.int8 / row.f32;
    rows.push(row);
    console.error(JSON.stringify(row));
  }
  for (const e of Object.values(engines)) e.dispose();
}
console.log('| model | workload | float32 sent/CPU-s | int8 sent/CPU-s | int8 / float32 | same text |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.model} | ${r.workload} | ${r.f32.toFixed(1)} | ${r.int8.toFixed(1)} | **${r.ratio.toFixed(2)}×** | ${r.same}/${r.sentences} |`);
}
console.log(`\nMedian of ${ROUNDS} rounds, same process, precisions alternating; Multi30k test_2016_flickr, first ${N} (beam 4: first ${N_BEAM}); node ${process.version}; ${new Date().toISOString()}`);

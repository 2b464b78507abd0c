#!/usr/bin/env node
// How evenly a greedy list's batches share two threads: the list dealt into B batches two ways — round-robin in
// input order (the engine before 2026-12-03) and longest first, back and forth (translate_many since: batch 0, 1,
// …, B−1, B−1, …, 0, 0, 1, …; a text's UTF-8 bytes stand in for its length) — each batch translated alone on one
// thread (process-CPU medians over rounds, the batches of both deals interleaved), then handed to two threads in
// order as they free up, as kernels::parallel_each does. Prints each batch's time, their sum and the makespan: the
// sum ÷ makespan is the most two threads can gain over one on that list, however good the threads. Counts work, not
// wall-clock, so a busy neighbour on the other core does not change it.
//
//   node bench/balance.mjs [--model de-en-general] [--set test2016|tatoeba] [--n 40] [--batches 4] [--rounds 9]
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

import { init, pipeline } from '../wasm/index.js';
import { options } from '../scripts/args.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const opt = options(process.argv.slice(2));
const MODEL = opt.get('--model', 'de-en-general');
const SET = opt.get('--set', 'test2016');
const N = Number(opt.get('--n', 40));
const B = Number(opt.get('--batches', 4));
const ROUNDS = Number(opt.get('--rounds', 9));

const files = {
  test2016: path.join(ROOT, '..', 'shared', 'data', 'multi30k', 'test_2016_flickr.de.gz'),
  tatoeba: path.join(ROOT, 'bench', 'peers', 'out', 'tatoeba_dev.de'), // written by bench/peers/run.mjs
};
if (!files[SET]) throw new Error(`bench/balance: --set must be test2016 or tatoeba, got ${SET}`);
if (!existsSync(files[SET])) {
  console.error(`bench/balance: ${files[SET]} is missing` +
    (SET === 'tatoeba' ? ' (`node bench/peers/run.mjs` writes it)' : ' (the shared data directory)'));
  process.exit(2);
}
const raw = readFileSync(files[SET]);
const texts = (files[SET].endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8').split('\n')
  .filter((l) => l.trim()).slice(0, N);

const roundRobin = Array.from({ length: B }, (_, b) => texts.filter((_, i) => i % B === b));
const longest = texts.map((_, i) => i)
  .sort((a, b) => Buffer.byteLength(texts[b]) - Buffer.byteLength(texts[a]) || a - b);
const backAndForth = Array.from({ length: B }, () => []);
longest.forEach((i, j) => {
  const lap = Math.floor(j / B), at = j % B;
  backAndForth[lap % 2 === 0 ? at : B - 1 - at].push(texts[i]);
});
const deals = { 'round-robin': roundRobin, 'longest first, back and forth': backAndForth };

await init({ threads: 1 });
const translate = await pipeline('translation', MODEL);
const cpuMs = async (list) => {
  const c0 = process.cpuUsage();
  await translate(list, { num_beams: 1 });
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1e3;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const samples = Object.fromEntries(Object.keys(deals).map((k) => [k, Array.from({ length: B }, () => [])]));
for (const batches of Object.values(deals)) for (const b of batches) await cpuMs(b); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, batches] of Object.entries(deals)) {
    for (let b = 0; b < B; b++) samples[name][b].push(await cpuMs(batches[b]));
  }
}
console.log(`${MODEL}, ${SET}, ${texts.length} texts in ${B} batches, greedy, every map; medians of ${ROUNDS} rounds ` +
  '(process-CPU ms)\n');
console.log('| deal | each batch, ms | sum | two threads\' makespan | at most |\n|---|---|---|---|---|');
for (const [name, perBatch] of Object.entries(samples)) {
  const ms = perBatch.map(median);
  const free = [0, 0]; // two threads taking the batches in order as they free up
  for (const x of ms) free[free[0] <= free[1] ? 0 : 1] += x;
  const sum = ms.reduce((a, b) => a + b, 0), makespan = Math.max(...free);
  console.log(`| ${name} | ${ms.map((x) => x.toFixed(0)).join(', ')} | ${sum.toFixed(0)} | ${makespan.toFixed(0)} | ` +
    `**${(sum / makespan).toFixed(2)}×** |`);
}
translate.dispose();

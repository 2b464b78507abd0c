#!/usr/bin/env node
// Memory over many calls (issue 19, item 4): the WebAssembly heap of the package must stay flat — after a warm-up,
// thousands of calls of every pipeline (sentiment, translation, captioning; attention maps on and off; greedy and
// beam), calls the engine refuses, and hundreds of create/dispose cycles must leave the heap where they found it.
// It is measured with memoryStats() (wasm/core.js): usedBytes, the bytes in live malloc blocks (dlmalloc's
// mallinfo), which falls back when memory is freed, and heapBytes, the WebAssembly memory, which only grows.
//
//   npm run test:memory                       the full run: 10,000 calls per configuration, 500 create/dispose
//                                             cycles per task, a table on stdout
//   node scripts/memory.mjs --calls=1000 --cycles=50 --only=translation-greedy,create-dispose-sentiment
//   node scripts/memory.mjs --out=tests/node/MEMORY.md     also writes the table (with the command) to that file
//
// Every call's result is also compared with the first result for the same input (the same text, label or caption),
// so a configuration that stays flat by returning garbage fails too. Exit status 1 when a configuration grows
// (usedBytes after ≠ before, or heapBytes more than 1 % above its level after the warm-up) or returns a different
// result. tests/node/memory.test.mjs runs the same configurations with fewer calls in CI.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

import { init, loadBundle, memoryStats, pipeline } from '../wasm/index.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const MODELS = {
  sentiment: ['sentiment-analysis', 'sst2-selfattn'],
  relation: ['sentiment-analysis', 'sst2-relation'],
  translation: ['translation', 'de-en-general'],
  captioning: ['image-to-text', 'flickr8k-mobilenet'],
  vqa: ['visual-question-answering', 'shapes-vqa-aoa'],
  sorting: ['number-sorting', 'pointer-sort'],
};

// Short, varied inputs (the calls cycle through them).
export const SENTENCES_EN = [
  "it 's a charming and often affecting journey .",
  'unflinchingly bleak and desperate',
  'the acting is fine but the plot is thin',
  'a masterpiece',
];
export const SENTENCES_DE = [
  'Ein Hund rennt.',
  'Zwei Kinder spielen im Schlamm.',
  'Ich habe keine Zeit.',
  'Ein Mann fährt Rad. Eine Frau liest.',
];

/** A deterministic test image: `kind` picks the size, the channels and the pattern. */
export function testImage(kind) {
  const [width, height, channels] = [[32, 24, 4], [17, 40, 3], [48, 48, 1]][kind % 3];
  const data = new Uint8ClampedArray(width * height * channels);
  for (let i = 0; i < data.length; i++) data[i] = (i * (37 + 11 * kind) + ((i / width) | 0) * 13) & 255;
  return { data, width, height, channels };
}
const IMAGES = [0, 1, 2].map(testImage);

// Per task: what a result is compared on (`key`), and one call for the create/dispose cycles (`once`).
const TASK_CHECKS = {
  translation: { key: (r) => [r.text, Array.from(r.target_ids)], once: (p) => p(SENTENCES_DE[0], { num_beams: 1 }) },
  'image-to-text': { key: (r) => [r.text, Array.from(r.token_ids)], once: (p) => p(IMAGES[0], { num_beams: 1 }) },
  'sentiment-analysis': { key: (r) => [r.label, r.tokens], once: (p) => p(SENTENCES_EN[0]) },
  'visual-question-answering': { key: (r) => [r.answer, r.tokens],
    once: (p) => p(IMAGES[0], 'what colour is the circle?') },
  'number-sorting': { key: (r) => r.order, once: (p) => p([3, 1, 2]) },
};
const keyOf = (task, r) => JSON.stringify(TASK_CHECKS[task].key(r));

// A configuration calling p(input(i), options), and its twin `${name}-no-maps` with output_attentions: false.
const withAndWithoutMaps = (name, model, input, options) => [
  { name, model, call: (p, i) => p(input(i), options) },
  { name: `${name}-no-maps`, model, call: (p, i) => p(input(i), { ...options, output_attentions: false }) },
];

/**
 * The configurations: { name, model (a key of MODELS), call(p, i) }; call returns the result to check, or
 * { error: RegExp } for a call that must be refused with an Error whose message matches.
 */
export const CONFIGURATIONS = [
  { name: 'sentiment-maps', model: 'sentiment', call: (p, i) => p(SENTENCES_EN[i % 4]) },
  { name: 'sentiment-no-maps', model: 'sentiment', call: (p, i) => p(SENTENCES_EN[i % 4], { output_attentions: false }) },
  { name: 'relation-maps', model: 'relation', call: (p, i) => p(SENTENCES_EN[i % 4]) },
  ...withAndWithoutMaps('translation-greedy', 'translation', (i) => SENTENCES_DE[i % 4], { num_beams: 1 }),
  ...withAndWithoutMaps('translation-beam4', 'translation', (i) => SENTENCES_DE[i % 4], { num_beams: 4 }),
  { name: 'translation-align', model: 'translation', call: (p, i) => p.align(SENTENCES_DE[i % 2], ['A dog runs.', 'Two children play in the mud.'][i % 2]) },
  ...withAndWithoutMaps('captioning-greedy', 'captioning', (i) => IMAGES[i % 3], { num_beams: 1 }),
  ...withAndWithoutMaps('captioning-beam3', 'captioning', (i) => IMAGES[i % 3], { num_beams: 3 }),
  { name: 'vqa-maps', model: 'vqa',
    call: (p, i) => p(IMAGES[i % 3], ['what colour is the circle?', 'how many squares are there?',
      'is the triangle left of the square?'][i % 3]) },
  { name: 'sorting', model: 'sorting', call: (p, i) => p([[3, 1, 2], [9.5, -2, 4, 4, 0.25], [7]][i % 3]) },
  // Calls the engine itself refuses (they pass the JS checks and fail inside WebAssembly): each used to leak its
  // arguments (wasm/bindings_common.h).
  { name: 'sentiment-refused', model: 'sentiment',
    call: (p, i) => expectError(p([' ', '', '\t'.repeat(100), ' \n '.repeat(50)][i % 4]), /empty input/) },
  { name: 'translation-refused', model: 'translation',
    call: (p, i) => expectError(p.align(SENTENCES_DE[i % 4], 'A dog runs.', { alignment_layer: 99 }), /alignment layer/) },
];

async function expectError(promise, re) {
  try {
    await promise;
  } catch (err) {
    if (!(err instanceof Error) || !re.test(err.message)) throw new Error(`expected an Error matching ${re}, got ${err}`);
    return { error: err.message };
  }
  throw new Error(`expected an Error matching ${re}, the call succeeded`);
}

const created = new Map();
/** One pipeline per model key, made once. */
export async function pipelineFor(model) {
  if (!created.has(model)) created.set(model, await pipeline(...MODELS[model]));
  return created.get(model);
}
export function disposeAll() {
  for (const p of created.values()) p.dispose();
  created.clear();
}

/**
 * Runs `calls` calls of configuration `config` after `warmup` calls. Returns { before, after, min, max, wrong,
 * calls }: memoryStats() after the warm-up and at the end, the least and most usedBytes seen between calls (sampled
 * every call), and the number of results that differ from the first result for the same input.
 */
export async function measureCalls(config, { calls, warmup = 16 }) {
  const p = await pipelineFor(config.model);
  const first = new Map();
  let wrong = 0;
  const one = async (i) => {
    const r = await config.call(p, i);
    const key = r.error ?? keyOf(MODELS[config.model][0], r);
    const slot = i % 12;
    if (!first.has(slot)) first.set(slot, key);
    else if (first.get(slot) !== key) wrong += 1;
  };
  for (let i = 0; i < warmup; i++) await one(i);
  const before = memoryStats();
  let min = before.usedBytes;
  let max = before.usedBytes;
  for (let i = 0; i < calls; i++) {
    await one(warmup + i);
    const used = memoryStats().usedBytes;
    if (used < min) min = used;
    if (used > max) max = used;
  }
  return { before, after: memoryStats(), min, max, wrong, calls };
}

/**
 * `cycles` times: pipeline() from an already loaded bundle (so the cycle is the WebAssembly side: the engine built
 * from the bundle's bytes), one call, dispose(). After `warmup` cycles.
 */
export async function measureCycles(model, { cycles, warmup = 3 }) {
  const [task, name] = MODELS[model];
  const bundle = await loadBundle(name);
  let expected = null;
  let wrong = 0;
  const cycle = async () => {
    const p = await pipeline(task, bundle);
    const key = keyOf(task, await TASK_CHECKS[task].once(p));
    p.dispose();
    expected ??= key;
    if (key !== expected) wrong += 1;
  };
  for (let i = 0; i < warmup; i++) await cycle();
  const before = memoryStats();
  let min = before.usedBytes;
  let max = before.usedBytes;
  for (let i = 0; i < cycles; i++) {
    await cycle();
    const used = memoryStats().usedBytes;
    if (used < min) min = used;
    if (used > max) max = used;
  }
  return { before, after: memoryStats(), min, max, wrong, calls: cycles };
}

/** Flat: usedBytes back exactly where it was, heapBytes within 1 %, every result the same. */
export function verdict(m) {
  const grew = m.after.usedBytes - m.before.usedBytes;
  const heap = m.after.heapBytes / m.before.heapBytes - 1;
  return { ok: grew === 0 && heap <= 0.01 && m.wrong === 0, grew, heap };
}

const mb = (b) => (b / 2 ** 20).toFixed(3);
const pct = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(4)} %`;

export function tableRow(name, m) {
  const v = verdict(m);
  return `| ${name} | ${m.calls} | ${mb(m.before.usedBytes)} | ${mb(m.after.usedBytes)} | ${v.grew} | ` +
    `${pct(v.grew / m.before.usedBytes)} | ${mb(m.min)} – ${mb(m.max)} | ${mb(m.before.heapBytes)} → ${mb(m.after.heapBytes)} | ` +
    `${m.wrong} | ${v.ok ? 'flat' : '**GREW**'} |`;
}
export const TABLE_HEAD = '| configuration | calls | used before (MiB) | used after (MiB) | Δ used (bytes) | Δ used | used min – max during (MiB) | heap (MiB) | wrong results | |\n' +
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|';

async function main() {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => {
    const a = args.find((x) => x.startsWith(`--${name}=`));
    return a === undefined ? dflt : a.slice(name.length + 3);
  };
  const calls = Number(opt('calls', 10000));
  const cycles = Number(opt('cycles', 500));
  const only = opt('only', null)?.split(',');
  const out = opt('out', null);
  const wanted = (name) => !only || only.includes(name);
  await init();
  const rows = [];
  let failed = false;
  const started = Date.now();
  let last = Date.now();
  const report = (name, m) => {
    const row = tableRow(name, m);
    rows.push(row);
    if (!verdict(m).ok) failed = true;
    console.log(`${row} (${((Date.now() - last) / 1000).toFixed(0)} s)`);
    last = Date.now();
  };
  console.log(TABLE_HEAD);
  const models = new Set();
  for (const config of CONFIGURATIONS) {
    if (!wanted(config.name)) continue;
    models.add(config.model);
    report(config.name, await measureCalls(config, { calls }));
  }
  for (const model of ['sentiment', 'translation', 'captioning', 'vqa', 'sorting']) {
    const name = `create-dispose-${model}`;
    if (!wanted(name)) continue;
    report(name, await measureCycles(model, { cycles }));
  }
  disposeAll();
  const minutes = ((Date.now() - started) / 60000).toFixed(1);
  let commit = '';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch { /* not a checkout */ }
  console.log(`\n${rows.length} configurations in ${minutes} min; ${failed ? 'SOME GREW' : 'all flat'}`);
  if (out) {
    const command = `node scripts/memory.mjs ${args.filter((a) => !a.startsWith('--out=')).join(' ')}`.trim();
    const text = `# Memory over many calls\n\nWritten by \`${command}\` (\`npm run test:memory\` runs the full set) on ` +
      `${new Date().toISOString().slice(0, 10)}, commit ${commit || '?'} plus the working tree, Node ${process.version}. ` +
      'Each configuration runs its warm-up calls (16 calls; 3 cycles for create/dispose), then `calls` more; ' +
      '"used" is `memoryStats().usedBytes` (bytes in live malloc blocks of the WebAssembly heap) after the warm-up ' +
      'and after the last call, "heap" the WebAssembly memory (it only grows). "wrong results": calls whose result ' +
      'differed from the first for the same input. Create/dispose: `pipeline(task, loadedBundle)`, one call, ' +
      `\`dispose()\`. Run time ${minutes} min.\n\n${TABLE_HEAD}\n${rows.join('\n')}\n`;
    writeFileSync(path.resolve(ROOT, out), text);
    console.log(`wrote ${out}`);
  }
  process.exitCode = failed ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

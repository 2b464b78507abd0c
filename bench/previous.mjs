// This build against an earlier one, in one Node process, one thread each, rounds alternating which goes first
// (median of process-CPU seconds): greedy translation with and without every map (the Transformer and both RNN
// translators), the caption encoder (float32 and int8 weights), the caption decoder with its α maps over encoded
// grids, and SST-2 classification. Every workload
// runs once on each build before the timed rounds (models that keep per-word projections have them by then).
// Build the earlier package aside first, e.g.
//   git worktree add /tmp/old <commit> && (cd /tmp/old && emcmake cmake -S . -B build-wasm && cmake --build build-wasm --target attnlens_wasm)
//   node bench/previous.mjs --old /tmp/old [--rounds 9] [--n 60] [--only translation]
import { readFileSync, readdirSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { readPpm } from '../scripts/ppm.mjs';

const { values: args } = parseArgs({ options: {
  old: { type: 'string' }, rounds: { type: 'string', default: '9' }, n: { type: 'string', default: '60' },
  only: { type: 'string', default: '' }, // workloads whose name contains this
} });
if (!args.old) {
  console.error('bench/previous: --old DIR (a checkout of the earlier commit with its wasm/dist built) is required');
  process.exit(2);
}
const NEW = await import('../wasm/index.js');
const OLD = await import(pathToFileURL(`${args.old}/wasm/index.js`).href);
await NEW.init({ threads: 1 });
await OLD.init({ threads: 1 });
const data = new URL('../../shared/data/multi30k/test_2016_flickr.de.gz', import.meta.url);
const lines = gunzipSync(readFileSync(data)).toString('utf8').split('\n').filter(Boolean).slice(0, Number(args.n));
const images = fileURLToPath(new URL('../tests/goldens/captioning/sanity/', import.meta.url));
const pictures = readdirSync(images).filter((f) => f.endsWith('.ppm')).map((f) => readPpm(images + f));
const engines = {};
for (const [k, m] of [['new', NEW], ['old', OLD]]) {
  const tr = await m.pipeline('translation', 'de-en-general');
  const cap = await m.pipeline('image-to-text', 'flickr8k-mobilenet');
  const cap8 = await m.pipeline('image-to-text', 'flickr8k-mobilenet', { precision: 'int8' });
  const rnn = await m.pipeline('translation', 'de-en-rnn-general');
  const gru = await m.pipeline('translation', 'de-en-rnn-additive');
  const sst2 = await m.pipeline('sentiment-analysis', 'sst2-selfattn');
  engines[k] = { tr, cap, cap8, rnn, gru, sst2, grids: pictures.map((p) => cap.encode(p)) };
}
const sst2Lines = readFileSync(new URL('../../shared/data/sst2/dev.tsv', import.meta.url), 'utf8').split('\n').slice(1)
  .filter((l) => l.trim()).map((l) => l.split('\t')[0]).slice(0, 5 * Number(args.n));
const workloads = [
  [`translation, greedy, every map, ${lines.length} sentences`, (e) => async () => { for (const s of lines) await e.tr(s, { num_beams: 1 }); }],
  [`translation, greedy, no maps, ${lines.length} sentences`, (e) => async () => { for (const s of lines) await e.tr(s, { num_beams: 1, output_attentions: false }); }],
  [`de-en-rnn-general, greedy, every map, ${lines.length} sentences`, (e) => async () => { for (const s of lines) await e.rnn(s, { num_beams: 1 }); }],
  [`de-en-rnn-additive, greedy, every map, ${lines.length} sentences`, (e) => async () => { for (const s of lines) await e.gru(s, { num_beams: 1 }); }],
  [`translation, beam 4, every map, ${lines.length} sentences`, (e) => async () => { for (const s of lines) await e.tr(s, { num_beams: 4 }); }],
  [`translation, beam 4, every map, a list of ${lines.length} in one call`, (e) => async () => { await e.tr(lines, { num_beams: 4 }); }],
  [`translation, greedy, every map, a list of ${lines.length} in one call`, (e) => async () => { await e.tr(lines, { num_beams: 1 }); }],
  [`de-en-rnn-general, beam 4, every map, ${lines.length} sentences`, (e) => async () => { for (const s of lines) await e.rnn(s, { num_beams: 4 }); }],
  [`sst2-selfattn, its map, ${sst2Lines.length} SST-2 dev sentences`, (e) => async () => { for (const s of sst2Lines) await e.sst2(s); }],
  ['caption encoder, float32, 3 × each sanity image', (e) => async () => {
    for (let r = 0; r < 3; r++) for (const p of pictures) e.cap.encode(p);
  }],
  ['caption encoder, int8, 3 × each sanity image', (e) => async () => {
    for (let r = 0; r < 3; r++) for (const p of pictures) e.cap8.encode(p);
  }],
  ['caption decoder, greedy with α, 20 × each sanity grid', (e) => async () => {
    for (let r = 0; r < 20; r++) for (const g of e.grids) e.cap.captionGrid(g, { num_beams: 1, output_attentions: true });
  }],
  ['caption decoder, its default beam with α, 5 × each sanity grid', (e) => async () => {
    for (let r = 0; r < 5; r++) for (const g of e.grids) e.cap.captionGrid(g, { output_attentions: true });
  }],
];
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log('| workload | earlier, CPU s | this build, CPU s | speed-up |\n|---|---|---|---|');
for (const [name, make] of workloads.filter(([n]) => n.includes(args.only))) {
  const t = { new: [], old: [] };
  await make(engines.new)();
  await make(engines.old)();
  for (let r = 0; r < Number(args.rounds); r++) {
    for (const k of r % 2 ? ['old', 'new'] : ['new', 'old']) {
      const c0 = process.cpuUsage();
      await make(engines[k])();
      const c = process.cpuUsage(c0);
      t[k].push((c.user + c.system) / 1e6);
    }
  }
  console.log(`| ${name} | ${median(t.old).toFixed(3)} | ${median(t.new).toFixed(3)} | **${(median(t.old) / median(t.new)).toFixed(2)}×** |`);
}

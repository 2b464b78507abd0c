#!/usr/bin/env node
// `npm run budgets` (issue 15, item 8): the figures a page or app pays before its first attention map.
//   1. size of each .wasm the package ships (the converted models' module too), raw and gzipped (level 9), against
//      the 500 KB gzipped budget (over it: exit status 1);
//   2. peak WebAssembly memory per pipeline: a fresh Node process per task loads its default model, runs a few
//      calls with every map (translation: beam 4 too), and reports the WebAssembly memory (heapBytes: it only grows,
//      so it is the peak) after loading and after the calls, and malloc's live bytes after the calls;
//   3. time to the first result after page load, in headless Chromium (scripts/serve.mjs on a free port): from
//      navigation to the first-sight translation on screen, with an empty profile (cold: nothing cached) and after a
//      reload in the same profile (warm: the module and model files from the Cache API / HTTP cache); median of
//      --runs cold/warm pairs. The server is local, so "cold" measures compile + parse + the engine, not a network.
//
//   node scripts/budgets.mjs [--runs 3] [--no-page] [--md FILE]
// Needs a WASM build (npm run build:wasm); part 3 needs Chromium (CHROMIUM_PATH, default /usr/bin/chromium).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { options } from './args.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const opt = options(process.argv.slice(2));
const arg = opt.get;
const RUNS = Number(arg('--runs', 3));
const WASM_BUDGET = 500 * 1024;
const gz9 = (bytes) => gzipSync(bytes, { level: 9 }).length;
const MB = (b) => `${(b / 1048576).toFixed(1)} MiB`;
const lines = [];
const out = (s = '') => {
  console.log(s);
  lines.push(s);
};

// ---- 1. sizes
// Single-threaded, threaded, and the converted models' module (initHf() loads it only for a converted bundle): each
// held to the same budget, and the script fails when one is over.
const wasmFiles = ['wasm/dist/attnlens.wasm', 'wasm/dist-mt/attnlens-mt.wasm', 'wasm/dist/attnlens-hf.wasm'];
out('| file | raw | gzip -9 | budget (gzip) |');
out('|---|---|---|---|');
let overBudget = false;
for (const f of wasmFiles) {
  const bytes = readFileSync(path.join(ROOT, f));
  const gz = gz9(bytes);
  overBudget ||= gz > WASM_BUDGET;
  out(`| ${f} | ${(bytes.length / 1024).toFixed(0)} KB | ${(gz / 1024).toFixed(0)} KB | ${gz <= WASM_BUDGET ? 'within' : '**over**'} 500 KB |`);
}

// ---- 2. peak memory per pipeline, one fresh process each
const CASES = [
  ['translation', 'de-en-general', `async (p) => { for (const b of [1, 4]) for (let i = 0; i < 3; i++) await p('Kannst du mir bitte helfen? Ein Mann fährt mit dem Fahrrad durch die Stadt.', { num_beams: b }); }`],
  ['translation', 'de-en-general (int8)', `async (p) => { for (const b of [1, 4]) for (let i = 0; i < 3; i++) await p('Kannst du mir bitte helfen? Ein Mann fährt mit dem Fahrrad durch die Stadt.', { num_beams: b }); }`],
  ['sentiment-analysis', 'sst2-selfattn', `async (p) => { for (let i = 0; i < 5; i++) await p("it 's a charming and often affecting journey ."); }`],
  ['image-to-text', 'flickr8k-mobilenet', `async (p) => { const d = new Uint8Array(224 * 224 * 4).map((_, i) => (i * 37) & 255); for (let i = 0; i < 3; i++) await p({ data: d, width: 224, height: 224 }, { num_beams: 5 }); }`],
  ['visual-question-answering', 'shapes-vqa-coattn', `async (p) => { const d = new Uint8Array(224 * 224 * 4).fill(200); for (let i = 0; i < 3; i++) await p({ data: d, width: 224, height: 224 }, 'is there a red circle?'); }`],
];
out();
out('| pipeline (default options, every map) | WebAssembly memory after load | after the calls (peak) | live malloc bytes after |');
out('|---|---|---|---|');
const memory = [];
for (const [task, label, calls] of CASES) {
  const model = label.replace(' (int8)', '');
  const opts = label.endsWith('(int8)') ? "{ precision: 'int8' }" : '{}';
  const script = `
    import { pipeline, memoryStats } from './wasm/index.js';
    const p = await pipeline(${JSON.stringify(task)}, ${JSON.stringify(model)}, ${opts});
    const a = memoryStats();
    await (${calls})(p);
    const b = memoryStats();
    console.log(JSON.stringify({ load: a.heapBytes, peak: b.heapBytes, used: b.usedBytes }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) {
    out(`| ${task} / ${label} | failed: ${(r.stderr || '').trim().split('\n').pop()} | | |`);
    continue;
  }
  const m = JSON.parse(r.stdout.trim().split('\n').pop());
  memory.push({ task, model: label, ...m });
  out(`| ${task} / ${label} | ${MB(m.load)} | ${MB(m.peak)} | ${MB(m.used)} |`);
}

// ---- 3. time to the first result in the page
const page = [];
if (!opt.has('--no-page')) {
  const { serve } = await import('./serve.mjs');
  const { launch } = await import('../tests/e2e/helpers.mjs');
  const { server, url } = await serve(ROOT, { port: 0 });
  const firstResult = async (p, load) => {
    const t0 = Date.now();
    await load();
    await p.waitForFunction(() => (document.querySelector('#tr-output')?.textContent ?? '').trim().length > 0,
      null, { timeout: 120000 });
    return Date.now() - t0;
  };
  try {
    for (let r = 0; r < RUNS; r++) {
      const browser = await launch({ width: 1440, height: 900 });
      try {
        const p = browser.context.pages()[0] ?? (await browser.context.newPage());
        const cold = await firstResult(p, () => p.goto(url, { waitUntil: 'commit' }));
        const warm = await firstResult(p, () => p.reload({ waitUntil: 'commit' }));
        page.push({ cold, warm });
        console.error(`page run ${r + 1}: cold ${cold} ms, warm ${warm} ms`);
      } finally {
        await browser.close();
      }
    }
  } finally {
    server.close();
  }
  const med = (k) => [...page.map((x) => x[k])].sort((a, b) => a - b)[Math.floor(page.length / 2)];
  out();
  out('| page load → first-sight translation on screen (de-en-general, beam 4, every map) | median | runs |');
  out('|---|---|---|');
  out(`| cold (empty profile) | ${med('cold')} ms | ${page.map((x) => x.cold).join(', ')} |`);
  out(`| warm (reload, cached module and model) | ${med('warm')} ms | ${page.map((x) => x.warm).join(', ')} |`);
}
out();
out(`node ${process.version}, ${new Date().toISOString()}`);
const md = arg('--md');
if (md) writeFileSync(md, `${lines.join('\n')}\n`);
writeFileSync(path.join(ROOT, 'out', 'budgets.json'), JSON.stringify({ memory, page }, null, 2));
if (overBudget) process.exitCode = 1;

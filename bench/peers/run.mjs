#!/usr/bin/env node
// `npm run bench:peers`: attnlens against onnxruntime-web on the same models, inputs and outputs (issue 15.1).
// See bench/peers/README.md. In one Node process, one thread each (ORT: env.wasm.numThreads = 1, SIMD build):
//   1. export: every model family handled here is exported from its training recipe to ONNX (float32) into
//      bench/peers/out/ (git-ignored), by /usr/bin/python3 bench/peers/export_*.py, unless the files are there;
//   2. parity: both engines on the same inputs; token ids must be equal and every attention map within 1e-4
//      (max |difference|), counted in the table's parity column (the timing runs either way);
//   3. timing: rounds; in each round every configuration (maps off / on) runs both engines over the same inputs,
//      the engine that goes first alternating by round; the table gives the median over rounds of each engine's
//      rate and the ratio of the medians (attnlens / ORT, > 1 = attnlens faster).
//
//   node bench/peers/run.mjs [--rounds 5] [--n 100] [--n-beam 30] [--beams 1,4] [--n-sst2 872]
//       [--models de-en-general,sst2-selfattn,sst2-relation,mobilenet-v2-imagenet,flickr8k-mobilenet,de-en-rnn-general,
//                 de-en-rnn-additive]
//       [--export] [--json FILE] [--md FILE] [--precision f32|int8] [--peer-precision f32|int8]
// --n: translation sentences per set (greedy), --n-beam: the first of those for beam 4 (Transformer only),
// --profile: translation only, one pass per workload with a CPU-time split instead of the timing rounds;
// --n-sst2: SST-2 dev sentences, --n-images: Flickr8k test images (at most the 20 exported); --export re-exports the ONNX files. Env PYTHON: the exporter's Python
// (default /usr/bin/python3, which needs python3-torch; the captioner's also python3-torchvision and python3-pil).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readGraph, usePeerInt8 } from './quantize-onnx.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const OUT = path.join(HERE, 'out');
const PYTHON = process.env.PYTHON ?? '/usr/bin/python3';

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const ROUNDS = Number(arg('--rounds', 5));
const N = Number(arg('--n', 100));
const MODELS = arg('--models', 'de-en-general,sst2-selfattn,sst2-relation,mobilenet-v2-imagenet,flickr8k-mobilenet,' +
  'de-en-rnn-general,de-en-rnn-additive').split(',');
const N_SST2 = Number(arg('--n-sst2', 872));
const N_BEAM = Number(arg('--n-beam', 30));
const N_IMAGES = Number(arg('--n-images', 20));
const N_HF_CLS = Number(arg('--n-hf-cls', 50)); // distilbert-hf: SST-2 dev sentences
const N_HF_MT = Number(arg('--n-hf-mt', 30)); // marian-hf: Tatoeba dev sentences
const BEAMS = arg('--beams', '1,4').split(',').map(Number);
const JSON_OUT = arg('--json', path.join(OUT, 'results.json'));
const MD_OUT = arg('--md', path.join(OUT, 'results.md'));
const FORCE_EXPORT = args.includes('--export');
const PROFILE = args.includes('--profile');
const MAP_TOL = 1e-4;
// --precision int8: attnlens keeps the weights a decoding step reads as int8 (pipeline option `precision`) while ORT
// stays float32; parity then counts how many outputs still agree (int8 changes the numbers), and rows say "int8".
const PRECISION = arg('--precision', 'f32');
const OURS = { precision: PRECISION };
// --peer-precision int8: ORT runs its dynamic int8 rewrite of each graph (quantize-onnx.mjs: MatMul / Gemm / Conv
// weights int8 per output channel, activations uint8 per call; LSTM and Gather stay float32).
const PEER_PRECISION = arg('--peer-precision', 'f32');
usePeerInt8(PEER_PRECISION === 'int8');
const label = (model) => (PRECISION === 'f32' && PEER_PRECISION === 'f32' ? model
  : `${model} (attnlens ${PRECISION}, ORT ${PEER_PRECISION})`);

function hint(msg) {
  console.error(`bench:peers: ${msg}`);
  process.exit(2);
}

let ort;
try {
  ort = await import('onnxruntime-web');
  ort = ort.default ?? ort;
} catch {
  hint('onnxruntime-web is missing; install the dev dependencies with `npm install` (or `npm install --save-dev onnxruntime-web@1.30.0`)');
}
if (!existsSync(path.join(ROOT, 'wasm', 'dist', 'attnlens.wasm'))) hint('wasm/dist is not built; run `npm run build:wasm`');
const built = statSync(path.join(ROOT, 'wasm', 'dist', 'attnlens.wasm')).mtime.toISOString().slice(0, 16); // the build loaded
const { pipeline, BpeTokenizer, tokenizeWords, init } = await import('../../wasm/index.js');
await init({ threads: 1 }); // one thread each: the single-threaded module, as onnxruntime-web below

ort.env.wasm.numThreads = 1;
ort.env.wasm.simd = true;
ort.env.logLevel = 'error';
const SESSION = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };

// ---------------------------------------------------------------- export
// Re-exports when a file is missing or older than the bundle's config.json / weights (a retrained bundle).
function ensureExport(script, bundle, files, sources = [bundle]) {
  const newest = Math.max(...sources.flatMap((b) => ['config.json', 'weights.safetensors']
    .map((f) => path.join(ROOT, 'models', b, f)).filter(existsSync).map((f) => statSync(f).mtimeMs)));
  const fresh = (f) => existsSync(path.join(OUT, f)) && statSync(path.join(OUT, f)).mtimeMs >= newest;
  if (!FORCE_EXPORT && files.every(fresh)) return;
  const probe = spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    hint(`PyTorch is missing for ${PYTHON} (the ONNX exporter): \`apt-get install python3-torch python3-torchvision ` +
      'python3-pil` (Debian 12; see the recipes\' READMEs), or point PYTHON= at a Python that has torch');
  }
  console.error(`exporting ${bundle} to ONNX (${script}) ...`);
  const r = spawnSync(PYTHON, [path.join(HERE, script), '--bundle', path.join(ROOT, 'models', bundle), '--out', OUT],
    { encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'] });
  if (r.status !== 0) throw new Error(`${script} failed: ${(r.stderr ?? '').split('\n').filter((l) => !/Warning/.test(l)).slice(-15).join('\n')}`);
}

// ---------------------------------------------------------------- helpers
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const readGz = (file) => gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter((l) => l.trim());

function compareMaps(mapsA, mapsB) {
  const a = Array.from(mapsA); // AttentionMaps (attnlens) or an array of maps (the peer)
  const b = Array.from(mapsB);
  if (a.length !== b.length) return { ok: false, why: `${a.length} maps vs ${b.length}`, maxDiff: Infinity };
  let maxDiff = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.name !== y.name || x.layer !== y.layer || x.head !== y.head || x.dims.join() !== y.dims.join()) {
      return { ok: false, why: `map ${i}: ${x.name}/${x.layer}/${x.head} ${x.dims} vs ${y.name}/${y.layer}/${y.head} ${y.dims}`, maxDiff: Infinity };
    }
    for (let j = 0; j < x.data.length; j++) maxDiff = Math.max(maxDiff, Math.abs(x.data[j] - y.data[j]));
  }
  return { ok: maxDiff <= MAP_TOL, maxDiff };
}

async function timeOver(fn, inputs) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const x of inputs) await fn(x);
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1e6 };
}

// Rounds; in each, every workload runs both engines over its inputs, which engine goes first alternating by round.
// Rates: inputs per wall second and per process-CPU second (the second is steadier on a loaded machine).
async function timeWorkloads(model, workloads) {
  for (const w of workloads) w.samples = { attnlens: [], ort: [], attnlens_cpu: [], ort_cpu: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const w of workloads) {
      const order = r % 2 === 0 ? ['attnlens', 'ort'] : ['ort', 'attnlens'];
      for (const who of order) {
        if (w.prepare) await w.prepare[who](); // untimed: e.g. a fresh model for a first-pass workload
        const t = await timeOver(w[who], w.inputs);
        w.samples[who].push(w.inputs.length / t.wall);
        w.samples[`${who}_cpu`].push(w.inputs.length / t.cpu);
        console.error(`  ${model} | ${w.workload} | ${w.input} | round ${r + 1} ${who}: ` +
          `${(w.inputs.length / t.wall).toFixed(1)} ${w.unit} (${(w.inputs.length / t.cpu).toFixed(1)} per CPU-s)`);
      }
    }
  }
  return workloads.map((w) => {
    const a = median(w.samples.attnlens);
    const o = median(w.samples.ort);
    const ac = median(w.samples.attnlens_cpu);
    const oc = median(w.samples.ort_cpu);
    return { model: label(model), workload: w.workload, input: w.input, unit: w.unit, attnlens: a, ort: o, ratio: a / o,
      attnlens_cpu: ac, ort_cpu: oc, ratio_cpu: ac / oc, samples: w.samples, parity: w.parity };
  });
}

// ---------------------------------------------------------------- translation (Transformer)
async function benchTranslation(bundleName) {
  const bundleDir = path.join(ROOT, 'models', bundleName);
  const cfg = JSON.parse(readFileSync(path.join(bundleDir, 'config.json'), 'utf8'));
  const rnn = cfg.architecture === 'rnn-seq2seq';
  const v = rnn ? ['encoder', 'decoder.maps', 'decoder.nomaps'].map((g) => `${bundleName}.${g}.onnx`)
    : ['encoder', 'decoder', 'decoder'].flatMap((g, i) => ['maps', 'nomaps'].map((m) => `${bundleName}.${g}.${m}${i === 2 ? '.logprobs' : ''}.onnx`));
  ensureExport('export_translation.py', bundleName, [...v, `${bundleName}.json`]);
  const { createOrtTranslator, createOrtBeamTranslator, createOrtRnnTranslator, profile } = await import('./translation.mjs');
  const tokenizer = BpeTokenizer.fromText(readFileSync(path.join(bundleDir, cfg.tokenizer.vocab), 'utf8'),
    readFileSync(path.join(bundleDir, cfg.tokenizer.merges), 'utf8'));
  const ours = await pipeline('translation', bundleName, OURS);
  const peer = {};
  const beamOpts = { beam: 4, alpha: cfg.decoding?.alpha ?? 0.6, candidatesPerBeam: cfg.decoding?.candidates_per_beam ?? 1 };
  for (const maps of [false, true]) {
    if (rnn) {
      peer[`1/${maps}`] = await createOrtRnnTranslator(ort, OUT, bundleDir, tokenizer, maps, SESSION);
      continue;
    }
    peer[`1/${maps}`] = await createOrtTranslator(ort, OUT, bundleDir, tokenizer, maps, SESSION);
    peer[`4/${maps}`] = await createOrtBeamTranslator(ort, OUT, bundleDir, tokenizer, maps, SESSION, beamOpts);
  }
  const sets = [{ name: 'Multi30k test_2016_flickr',
    lines: readGz(path.join(ROOT, '..', 'shared', 'data', 'multi30k', 'test_2016_flickr.de.gz')).slice(0, N) }];
  const tatoeba = path.join(OUT, 'tatoeba_dev.de');
  if (existsSync(tatoeba)) {
    sets.push({ name: 'Tatoeba dev (general.py)', lines: readFileSync(tatoeba, 'utf8').split('\n').filter((l) => l.trim()).slice(0, N) });
  }
  // copy_numbers off: the peer runs the model alone (the copy is a step after the search, on inputs with digits);
  // coverage_beta 0: the peer's beam search has no coverage penalty (de-en-general's default is 0.1), so both run
  // the same search.
  const attn = (beams, maps) => (s) => ours(s, { num_beams: beams, output_attentions: maps, alpha: beamOpts.alpha,
    copy_numbers: false, coverage_beta: 0 });
  const workloads = await translationWorkloads(bundleName, sets, BEAMS.filter((b) => !rnn || b === 1), attn, peer);
  if (PROFILE) return profileTranslation(bundleName, bundleDir, cfg, workloads, profile, (await import('../../wasm/core.js')).getModule());
  const rows = await timeWorkloads(bundleName, workloads);
  ours.dispose();
  return rows;
}

// Parity over every sentence timed, maps on (ids and every map) and off (ids), then the maps-off / maps-on workloads
// of each set × beam width. attn(beams, maps) and peer[`${beams}/${maps}`]: text → result.
async function translationWorkloads(name, sets, beamsList, attn, peer) {
  const workloads = [];
  for (const set of sets) {
    for (const beams of beamsList) {
      const lines = set.lines.slice(0, beams === 1 ? N : N_BEAM);
      let idsEqual = 0;
      let srcEqual = 0;
      let maxDiff = 0;
      let mapsOk = 0;
      const firstBad = [];
      for (const s of lines) {
        const a = await attn(beams, true)(s);
        const b = await peer[`${beams}/true`](s);
        const a0 = await attn(beams, false)(s);
        const b0 = await peer[`${beams}/false`](s);
        const same = a.target_ids.join() === b.target_ids.join() && a0.target_ids.join() === b0.target_ids.join();
        if (a.source_ids.join() === b.source_ids.join()) srcEqual++;
        if (same) {
          idsEqual++;
          const c = compareMaps(a.attentions, b.attentions);
          if (c.ok) mapsOk++;
          maxDiff = Math.max(maxDiff, c.maxDiff);
        } else if (firstBad.length < 3) {
          firstBad.push({ sentence: s, attnlens: a.text, ort: b.text });
        }
      }
      const parity = { sentences: lines.length, source_ids_equal: srcEqual, target_ids_equal: idsEqual,
        maps_within_tol: mapsOk, max_map_diff: maxDiff, first_mismatches: firstBad };
      console.error(`${name} ${set.name} beam ${beams}: parity ${JSON.stringify(parity)}`);
      for (const maps of [false, true]) {
        workloads.push({ workload: `${beams === 1 ? 'greedy' : `beam ${beams}`}, ${maps ? 'every map' : 'no maps'}`,
          input: `${set.name}, first ${lines.length}`, unit: 'sent/s', inputs: lines, attnlens: attn(beams, maps),
          ort: peer[`${beams}/${maps}`], parity });
      }
    }
  }
  return workloads;
}

// --profile: one pass per workload, process-CPU time split. attnlens: the pipeline call, and the engine's own
// Translator.translate (the same WebAssembly call the pipeline makes, without the pipeline's JavaScript around it);
// ORT: inside the encoder graph, inside the decoder-step graphs, the rest (JS search, cache gathers, map assembly,
// tokenizer). Instead of the timing rounds.
// `module`: the WebAssembly module the pipeline runs on (the HF one for a converted bundle); "of which encoder + first
// step": the same engine call with max_new_tokens 1 (the rest of the engine time is the later decoding steps).
async function profileTranslation(model, bundleDir, cfg, workloads, profile, module) {
  const text = (f) => readFileSync(path.join(bundleDir, f), 'utf8');
  const files = Object.fromEntries(['vocab', 'merges', 'file'].map((k) => cfg.tokenizer[k]).filter((f) => typeof f === 'string')
    .map((f) => [f, text(f)]));
  const engine = module.Translator.fromBundle(JSON.stringify(cfg), new Uint8Array(readFileSync(path.join(bundleDir, cfg.weights))),
    files, model);
  const cpu = () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  };
  const rows = [];
  for (const w of workloads) {
    const beams = w.workload.startsWith('greedy') ? 1 : Number(w.workload.match(/beam (\d+)/)[1]);
    const maps = w.workload.includes('every map');
    let t0 = cpu();
    for (const x of w.inputs) await w.attnlens(x);
    const pipelineMs = cpu() - t0;
    const options = JSON.stringify({ num_beams: beams, output_attentions: maps, copy_numbers: false, coverage_beta: 0 });
    t0 = cpu();
    for (const x of w.inputs) engine.translate(x, options);
    const engineMs = cpu() - t0;
    const first = JSON.stringify({ ...JSON.parse(options), max_new_tokens: 1 });
    t0 = cpu();
    for (const x of w.inputs) engine.translate(x, first);
    const firstStepMs = cpu() - t0;
    Object.assign(profile, { on: true, encoder: 0, decoder: 0, steps: 0 });
    t0 = cpu();
    for (const x of w.inputs) await w.ort(x);
    const ortMs = cpu() - t0;
    profile.on = false;
    const n = w.inputs.length;
    const r = { model, workload: w.workload, input: w.input, sentences: n,
      attnlens_pipeline_ms: pipelineMs / n, attnlens_engine_ms: engineMs / n, attnlens_first_step_ms: firstStepMs / n,
      ort_total_ms: ortMs / n, ort_encoder_ms: profile.encoder / 1000 / n, ort_decoder_ms: profile.decoder / 1000 / n,
      ort_steps: profile.steps / n };
    rows.push(r);
    console.error(`  profile ${JSON.stringify(r)}`);
  }
  engine.delete();
  return rows;
}

// ---------------------------------------------------------------- sentiment (SST-2)
// ORT side: the same words (attnlens' tokenizeWords, SST-2 conventions), looked up in the bundle's vocab.txt
// (<unk> = 1), cut at the pipeline's 256 tokens; probabilities from the graph's softmax.
async function benchSentiment(name) {
  const bundleDir = path.join(ROOT, 'models', name);
  ensureExport('export_sentiment.py', name, [`${name}.maps.onnx`, `${name}.nomaps.onnx`, `${name}.json`]);
  const vocab = new Map(readFileSync(path.join(bundleDir, 'vocab.txt'), 'utf8').split('\n').map((w, i) => [w, i]));
  const ours = await pipeline('sentiment-analysis', name, OURS);
  const maxTokens = ours.maxTokens;
  const sessions = {};
  for (const maps of [false, true]) {
    sessions[maps] = await ort.InferenceSession.create(readGraph(OUT, `${name}.${maps ? 'maps' : 'nomaps'}.onnx`), SESSION);
  }
  const peer = (maps) => async (text) => {
    const words = tokenizeWords(text).slice(0, maxTokens);
    const ids = BigInt64Array.from(words, (w) => BigInt(vocab.get(w) ?? 1));
    const r = await sessions[maps].run({ ids: new ort.Tensor('int64', ids, [1, ids.length]) });
    const p = r.probabilities.data;
    const out = { label: p[1] > p[0] ? 'POSITIVE' : 'NEGATIVE', probabilities: p, ids: Int32Array.from(ids, Number), attentions: [] };
    if (maps) out.attentions.push({ dims: r.attention.dims.slice(1), data: r.attention.data });
    return out;
  };
  const lines = readFileSync(path.join(ROOT, '..', 'shared', 'data', 'sst2', 'dev.tsv'), 'utf8').split('\n').slice(1)
    .filter((l) => l.trim()).map((l) => l.split('\t')[0]).slice(0, N_SST2);
  let idsEqual = 0;
  let labelsEqual = 0;
  let maxProb = 0;
  let maxDiff = 0;
  let mapsOk = 0;
  for (const s of lines) {
    const a = await ours(s, { output_attentions: true });
    const b = await peer(true)(s);
    if (a.ids.join() === b.ids.join()) idsEqual++;
    if (a.label === b.label) labelsEqual++;
    maxProb = Math.max(maxProb, Math.abs(a.probabilities[1] - b.probabilities[1]));
    const c = compareMaps(a.attentions.map((m) => ({ ...m, name: '', layer: 0, head: 0 })),
      b.attentions.map((m) => ({ ...m, name: '', layer: 0, head: 0 })));
    if (c.ok) mapsOk++;
    maxDiff = Math.max(maxDiff, c.maxDiff);
  }
  const parity = { sentences: lines.length, ids_equal: idsEqual, target_ids_equal: labelsEqual, labels_equal: labelsEqual,
    max_probability_diff: maxProb, maps_within_tol: mapsOk, max_map_diff: maxDiff };
  console.error(`${name}: parity ${JSON.stringify(parity)}`);
  const input = `SST-2 dev, first ${lines.length}`;
  const workloads = [false, true].map((maps) => ({
    workload: maps ? 'classify, its map' : 'classify, no map', input, unit: 'sent/s', inputs: lines,
    attnlens: (s) => ours(s, { output_attentions: maps }), ort: peer(maps), parity }));
  // The first pass of a freshly loaded model over the set: sst2-selfattn keeps each word's input projection once
  // computed (src/nn/embedding_projection.h), so the rows above, after the parity pass, read kept rows; here both
  // engines start from a new model / session every round (load untimed).
  let fresh = null;
  const freshSession = { ort: null };
  workloads.push({
    workload: 'classify, its map, first pass of a fresh model', input, unit: 'sent/s', inputs: lines, parity,
    prepare: {
      attnlens: async () => { fresh?.dispose(); fresh = await pipeline('sentiment-analysis', name, OURS); },
      ort: async () => {
        await freshSession.ort?.release();
        freshSession.ort = await ort.InferenceSession.create(readGraph(OUT, `${name}.maps.onnx`), SESSION);
      },
    },
    attnlens: (s) => fresh(s, { output_attentions: true }),
    ort: async (text) => {
      const words = tokenizeWords(text).slice(0, maxTokens);
      const ids = BigInt64Array.from(words, (w) => BigInt(vocab.get(w) ?? 1));
      return freshSession.ort.run({ ids: new ort.Tensor('int64', ids, [1, ids.length]) });
    },
  });
  const rows = await timeWorkloads(name, workloads);
  fresh?.dispose();
  await freshSession.ort?.release();
  ours.dispose();
  return rows;
}

// ---------------------------------------------------------------- captioning: the MobileNetV2 encoder
// Both get the same S×S RGBA pixels (S = the captioner's config.json "image.input_size"; Flickr8k test images
// resized by the exporter), so neither resizes; attnlens: the pipeline's encode() (composite, normalise,
// MobileNetV2 → grid); ORT: the same normalisation in JS, then the graph. Output: the (S/32)²×D grid the decoder
// attends over (no attention in the encoder).
// The captioner's encoder bundle (config.json "encoder.bundle"): since issue 20 flickr8k-mobilenet has its own,
// fine-tuned MobileNetV2 (the same network as mobilenet-v2-imagenet), so this row times that one.
const captionerConfig = (name) => JSON.parse(readFileSync(path.join(ROOT, 'models', name, 'config.json'), 'utf8'));
const captionerEncoder = (name) => captionerConfig(name).encoder.bundle;
const captionerSide = (name) => captionerConfig(name).image?.input_size?.[0] ?? 224;
const testImagesFile = (S) => `flickr8k_test_${S}.rgba`;

// The exporter's first N_IMAGES test images, S×S RGBA, as the pipeline's image objects.
function testImages(S) {
  const raw = readFileSync(path.join(OUT, testImagesFile(S)));
  const size = S * S * 4;
  const images = [];
  for (let i = 0; i + size <= raw.length && images.length < N_IMAGES; i += size) {
    images.push({ data: new Uint8Array(raw.buffer, raw.byteOffset + i, size), width: S, height: S, channels: 4 });
  }
  return images;
}

// The engine's preprocessing in JS for ORT: alpha over white, x = v / 127.5 - 1, CHW [1, 3, S, S].
function ortPixels(px) {
  const S = px.width;
  const x = new Float32Array(3 * S * S);
  const d = px.data;
  for (let p = 0; p < S * S; p++) {
    const a = d[4 * p + 3];
    for (let c = 0; c < 3; c++) x[c * S * S + p] = ((d[4 * p + c] * a + 255 * (255 - a)) / 255) / 127.5 - 1;
  }
  return new ort.Tensor('float32', x, [1, 3, S, S]);
}

async function benchCaptioningEncoder(name) {
  const encName = captionerEncoder('flickr8k-mobilenet');
  const S = captionerSide('flickr8k-mobilenet');
  ensureExport('export_captioning.py', 'flickr8k-mobilenet', [`${encName}.encoder.onnx`, testImagesFile(S)],
    ['flickr8k-mobilenet', encName]);
  const ours = await pipeline('image-to-text', 'flickr8k-mobilenet', OURS);
  const sess = await ort.InferenceSession.create(readGraph(OUT, `${encName}.encoder.onnx`), SESSION);
  const images = testImages(S);
  const peer = async (px) => (await sess.run({ pixels: ortPixels(px) })).grid.data;
  let maxDiff = 0;
  let maxAbs = 0;
  for (const px of images) {
    const a = ours.encode(px);
    const b = await peer(px);
    for (let j = 0; j < a.length; j++) {
      maxDiff = Math.max(maxDiff, Math.abs(a[j] - b[j]));
      maxAbs = Math.max(maxAbs, Math.abs(a[j]));
    }
  }
  const parity = { images: images.length, max_grid_diff: maxDiff, max_grid_value: maxAbs };
  console.error(`${name}: parity ${JSON.stringify(parity)}`);
  const rows = await timeWorkloads(name, [{ workload: `image → ${S / 32}×${S / 32} grid`, input: `Flickr8k test, first ${images.length}, ${S}×${S}`,
    unit: 'img/s', inputs: images, attnlens: async (px) => ours.encode(px), ort: peer, parity }]);
  ours.dispose();
  return rows;
}

// ---------------------------------------------------------------- captioning: the whole captioner, greedy
// Image → caption (+ the visual attention α [T,G,G] of every step, G = S/32, and the gate β): attnlens' pipeline
// caption(image, { num_beams: 1, allow_unk: true }) (the plain argmax: the pipeline's default suppresses <unk>, which
// the ORT loop does not); ORT: the encoder graph (as above), the decoder's init graph, then a JS greedy
// loop over the step graph (argmax, ties to the lowest id, at most the bundle's max_len steps, stop at <end>).
async function benchCaptioner(name) {
  const encName = captionerEncoder(name);
  const S = captionerSide(name);
  const G = S / 32;
  const files = [`${encName}.encoder.onnx`, testImagesFile(S), `${name}.decoder-init.onnx`,
    `${name}.decoder.maps.onnx`, `${name}.decoder.nomaps.onnx`];
  ensureExport('export_captioning.py', name, files, [name, encName]);
  const cfg = JSON.parse(readFileSync(path.join(ROOT, 'models', name, 'config.json'), 'utf8'));
  const END = cfg.tokenizer.end_id;
  const START = cfg.tokenizer.start_id;
  const maxLen = cfg.decoder.max_len;
  const V = cfg.decoder.vocab_size;
  const ours = await pipeline('image-to-text', name, OURS);
  const open = async (f) => ort.InferenceSession.create(readGraph(OUT, f), SESSION);
  const enc = await open(`${encName}.encoder.onnx`);
  const init = await open(`${name}.decoder-init.onnx`);
  const step = { false: await open(`${name}.decoder.nomaps.onnx`), true: await open(`${name}.decoder.maps.onnx`) };
  const images = testImages(S);
  const peer = (maps) => async (px) => {
    const grid = (await enc.run({ pixels: ortPixels(px) })).grid;
    const s0 = await init.run({ grid });
    const feeds = { p: s0.p, keys: s0.keys, h: s0.h, c: s0.c };
    const ids = [];
    const alphas = [];
    const betas = [];
    let prev = START;
    for (let t = 0; t < maxLen; t++) {
      feeds.token = new ort.Tensor('int64', BigInt64Array.of(BigInt(prev)), [1]);
      const r = await step[maps].run(feeds);
      const lg = r.logits.data;
      let best = 0;
      for (let v = 1; v < V; v++) if (lg[v] > lg[best]) best = v;
      feeds.h = r.next_h;
      feeds.c = r.next_c;
      if (maps) {
        alphas.push(r.alpha.data);
        betas.push(r.beta.data[0]);
      }
      ids.push(best);
      prev = best;
      if (best === END) break;
    }
    const out = { token_ids: Int32Array.from(ids), attentions: [], betas: Float32Array.from(betas) };
    if (maps) {
      const m = new Float32Array(ids.length * G * G);
      alphas.forEach((a, t) => m.set(a, t * G * G));
      out.attentions.push({ name: 'visual', layer: -1, head: -1, dims: [ids.length, G, G], data: m });
    }
    return out;
  };
  const attn = (maps) => (px) => ours(px, { num_beams: 1, allow_unk: true, output_attentions: maps });
  let idsEqual = 0;
  let mapsOk = 0;
  let maxDiff = 0;
  let maxBeta = 0;
  for (const px of images) {
    const a = await attn(true)(px);
    const b = await peer(true)(px);
    const a0 = await attn(false)(px);
    const b0 = await peer(false)(px);
    if (a.token_ids.join() !== b.token_ids.join() || a0.token_ids.join() !== b0.token_ids.join()) continue;
    idsEqual++;
    const c = compareMaps(a.attentions, b.attentions);
    for (let t = 0; t < a.betas.length; t++) maxBeta = Math.max(maxBeta, Math.abs(a.betas[t] - b.betas[t]));
    if (c.ok) mapsOk++;
    maxDiff = Math.max(maxDiff, c.maxDiff);
  }
  const parity = { sentences: images.length, target_ids_equal: idsEqual, maps_within_tol: mapsOk, max_map_diff: maxDiff,
    max_beta_diff: maxBeta };
  console.error(`${name}: parity ${JSON.stringify(parity)}`);
  const input = `Flickr8k test, first ${images.length}, ${S}×${S}`;
  const rows = await timeWorkloads(name, [false, true].map((maps) => ({
    workload: `caption greedy, ${maps ? 'α maps' : 'no maps'}`, input, unit: 'img/s', inputs: images,
    attnlens: attn(maps), ort: peer(maps), parity })));
  ours.dispose();
  return rows;
}

// ---------------------------------------------------------------- converted Hugging Face models (issue 60)
// export_hf.py writes the seeded random-init HF folders (<name>.hf) and their ONNX graphs; `attnlens convert` (the
// CLI, wasm/cli.js) turns each folder into the bundle attnlens loads (<name>/), so both engines hold the same weights.
function ensureHfExport(name, graphs) {
  const bundle = path.join(OUT, name);
  if (FORCE_EXPORT || ![...graphs, `${name}.json`, `${name}.hf`].every((f) => existsSync(path.join(OUT, f)))) {
    const probe = spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) hint(`PyTorch is missing for ${PYTHON} (the ONNX exporter): \`apt-get install python3-torch\``);
    console.error(`writing ${name} (export_hf.py) ...`);
    const r = spawnSync(PYTHON, [path.join(HERE, 'export_hf.py'), '--only', name, '--out', OUT],
      { encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'] });
    if (r.status !== 0) throw new Error(`export_hf.py failed: ${(r.stderr ?? '').split('\n').filter((l) => !/Warning/.test(l)).slice(-15).join('\n')}`);
    rmSync(bundle, { recursive: true, force: true });
  }
  if (!existsSync(path.join(bundle, 'config.json'))) {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'wasm', 'cli.js'), 'convert', path.join(OUT, `${name}.hf`), bundle,
      '--name', name], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`attnlens convert ${name} failed: ${r.stderr}`);
  }
  return { bundle, meta: JSON.parse(readFileSync(path.join(OUT, `${name}.json`), 'utf8')) };
}

// The DistilBERT-size classifier: both engines take the same token ids ([CLS] … [SEP], the fixture WordPiece
// tokenizer's, from the pipeline's own tokenization, untimed): SST-2 dev sentences at their natural lengths, and one
// 128- and one 512-token input (consecutive dev sentences' pieces, cut). attnlens: pipeline('text-classification')
// on ids; ORT: the graph, the [L,1,H,T,T] output cut into the same L·H maps.
async function benchHfClassifier(name) {
  const { bundle, meta } = ensureHfExport(name, ['maps', 'nomaps'].map((v) => `${name}.${v}.onnx`));
  const ours = await pipeline('text-classification', bundle);
  const sessions = {};
  for (const maps of [false, true]) {
    sessions[maps] = await ort.InferenceSession.create(readGraph(OUT, `${name}.${maps ? 'maps' : 'nomaps'}.onnx`), SESSION);
  }
  const { layers: L, heads: H } = meta;
  const peer = (maps) => async (ids) => {
    const T = ids.length;
    const r = await sessions[maps].run({ ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, T]) });
    const logits = r.logits.data;
    const out = { label: ours.labels[logits[1] > logits[0] ? 1 : 0], logits, ids, attentions: [] };
    if (maps) {
      const a = r.attentions.data;
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          out.attentions.push({ name: 'self-attention', layer: l, head: h, dims: [T, T], data: a.slice((l * H + h) * T * T, (l * H + h + 1) * T * T) });
        }
      }
    }
    return out;
  };
  const lines = readFileSync(path.join(ROOT, '..', 'shared', 'data', 'sst2', 'dev.tsv'), 'utf8').split('\n').slice(1)
    .filter((l) => l.trim()).map((l) => l.split('\t')[0]);
  const ids = [];
  for (const s of lines.slice(0, N_HF_CLS)) ids.push((await ours(s, { output_attentions: false })).ids);
  const long = async (T) => { // [CLS] + the pieces of consecutive dev sentences from the first, cut to T − 2, + [SEP]
    const body = [];
    for (let i = 0; body.length < T - 2 && i < lines.length; i++) {
      body.push(...(ids[i] ?? (await ours(lines[i], { output_attentions: false })).ids).slice(1, -1));
    }
    return Int32Array.from([ids[0][0], ...body.slice(0, T - 2), ids[0].at(-1)]);
  };
  const sets = [{ input: `SST-2 dev, first ${ids.length} (mean ${(ids.reduce((a, x) => a + x.length, 0) / ids.length).toFixed(1)} tokens)`, inputs: ids },
    { input: 'SST-2 dev pieces, 128 tokens', inputs: [await long(128)] },
    { input: 'SST-2 dev pieces, 512 tokens', inputs: [await long(512)] }];
  const workloads = [];
  for (const set of sets) {
    let labelsEqual = 0;
    let maxLogit = 0;
    let maxDiff = 0;
    let mapsOk = 0;
    for (const x of set.inputs) {
      const a = await ours(x, { output_attentions: true });
      const b = await peer(true)(x);
      const b0 = await peer(false)(x);
      if (a.label === b.label && b0.logits.every((v, i) => Math.abs(v - b.logits[i]) <= 1e-5)) labelsEqual++;
      for (let i = 0; i < a.logits.length; i++) maxLogit = Math.max(maxLogit, Math.abs(a.logits[i] - b.logits[i]));
      const c = compareMaps(a.attentions, b.attentions);
      if (c.ok) mapsOk++;
      maxDiff = Math.max(maxDiff, c.maxDiff);
    }
    const parity = { sentences: set.inputs.length, labels_equal: labelsEqual, max_logit_diff: maxLogit,
      target_ids_equal: labelsEqual, maps_within_tol: mapsOk, max_map_diff: maxDiff };
    console.error(`${name} ${set.input}: parity ${JSON.stringify(parity)}`);
    for (const maps of [false, true]) {
      workloads.push({ workload: maps ? 'classify, every map' : 'classify, no maps', input: set.input, unit: 'inputs/s',
        inputs: set.inputs, attnlens: (x) => ours(x, { output_attentions: maps }), ort: peer(maps), parity });
    }
  }
  const rows = await timeWorkloads(name, workloads);
  ours.dispose();
  return rows;
}

// The Marian-size translator, greedy: attnlens' pipeline('translation') on the text (its tokenizer, </s>, its
// detokenisation and word alignment included); ORT: the same source ids (the pipeline's, untimed), the encoder
// graph, translation.mjs's greedy loop over the step graph (start = <pad>, <pad> never chosen, stop at </s>, at most
// 2·S + 10 steps), the pieces joined from vocab.json; maps assembled as for the shipped Transformers.
async function benchHfTranslation(name) {
  const graphs = ['encoder', 'decoder'].flatMap((g) => ['maps', 'nomaps'].map((m) => `${name}.${g}.${m}.onnx`));
  const { bundle } = ensureHfExport(name, [...graphs, 'tatoeba_dev.de']);
  const { createOrtTranslator, profile } = await import('./translation.mjs');
  const ours = await pipeline('translation', bundle);
  const lines = readFileSync(path.join(OUT, 'tatoeba_dev.de'), 'utf8').split('\n').filter((l) => l.trim()).slice(0, N_HF_MT);
  const sourceIds = new Map();
  for (const s of lines) sourceIds.set(s, (await ours(s, { num_beams: 1, output_attentions: false, copy_numbers: false })).source_ids);
  const pieces = [];
  for (const [p, i] of Object.entries(JSON.parse(readFileSync(path.join(bundle, 'vocab.json'), 'utf8')))) pieces[i] = p;
  const tokenizer = { encode: (text) => ({ ids: sourceIds.get(text).slice(0, -1) }),
    decode: (ids) => Array.from(ids, (i) => pieces[i]).join('').replaceAll('▁', ' ').trim() };
  const peer = {};
  for (const maps of [false, true]) peer[`1/${maps}`] = await createOrtTranslator(ort, OUT, bundle, tokenizer, maps, SESSION);
  const attn = (beams, maps) => (s) => ours(s, { num_beams: beams, output_attentions: maps, copy_numbers: false });
  const workloads = await translationWorkloads(name, [{ name: 'Tatoeba dev (general.py)', lines }], [1], attn, peer);
  let steps = 0;
  for (const s of lines) steps += (await ours(s, { num_beams: 1, output_attentions: false, copy_numbers: false })).target_ids.length;
  console.error(`${name}: ${(steps / lines.length).toFixed(1)} target tokens per sentence`);
  for (const w of workloads) w.input += `, ${(steps / lines.length).toFixed(1)} steps/sent`;
  if (PROFILE) {
    const { initHf } = await import('../../wasm/core.js');
    const cfg = JSON.parse(readFileSync(path.join(bundle, 'config.json'), 'utf8'));
    return profileTranslation(name, bundle, cfg, workloads, profile, await initHf());
  }
  const rows = await timeWorkloads(name, workloads);
  ours.dispose();
  return rows;
}

// ---------------------------------------------------------------- main
mkdirSync(OUT, { recursive: true });
const BENCHES = { 'de-en-general': benchTranslation, 'de-en-transformer': benchTranslation,
  'de-en-rnn-general': benchTranslation, 'de-en-rnn-additive': benchTranslation,
  'sst2-selfattn': benchSentiment, 'sst2-relation': benchSentiment, 'mobilenet-v2-imagenet': benchCaptioningEncoder,
  'flickr8k-mobilenet': benchCaptioner, 'distilbert-hf': benchHfClassifier, 'marian-hf': benchHfTranslation };
const results = [];
for (const m of MODELS) {
  const b = BENCHES[m];
  if (!b) hint(`no peer benchmark for ${m} yet (have: ${Object.keys(BENCHES).join(', ')})`);
  results.push(...await b(m));
}

const ortVersion = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'onnxruntime-web', 'package.json'), 'utf8')).version;
const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() || '?';
const machine = `${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} vCPU, Node ${process.version}, onnxruntime-web ${ortVersion} ` +
  `(wasm EP, SIMD, 1 thread, graphOptimizationLevel all), attnlens wasm/dist built ${built} UTC in a checkout at ${head} ` +
  '(SIMD128, 1 thread)';
const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
if (PROFILE) {
  const f2 = (x) => x.toFixed(2);
  const md = [
    '| model | workload | input | attnlens pipeline ms/sent | of which engine call | of which encoder + first step | ORT ms/sent | ORT encoder | ORT decoder steps (steps/sent) | ORT rest (JS) |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...results.map((r) => `| ${r.model} | ${r.workload} | ${r.input} | ${f2(r.attnlens_pipeline_ms)} | ${f2(r.attnlens_engine_ms)} | ${f2(r.attnlens_first_step_ms)} | ` +
      `${f2(r.ort_total_ms)} | ${f2(r.ort_encoder_ms)} | ${f2(r.ort_decoder_ms)} (${r.ort_steps.toFixed(1)}) | ` +
      `${f2(r.ort_total_ms - r.ort_encoder_ms - r.ort_decoder_ms)} |`),
    '', `Process-CPU milliseconds per sentence, one pass each (run.mjs --profile). ${machine}.`,
  ].join('\n');
  writeFileSync(MD_OUT, md + '\n');
  writeFileSync(JSON_OUT, JSON.stringify({ profile: results }, null, 2));
  console.log(md);
  process.exit(0);
}
const parityCell = (p) => p.max_logit_diff !== undefined ? `labels ${p.labels_equal}/${p.sentences}, logits ±${p.max_logit_diff.toExponential(0)}, ` +
  `maps ${p.maps_within_tol}/${p.sentences} (max ${p.max_map_diff.toExponential(1)})` : p.max_grid_diff !== undefined ? `grid max diff ${p.max_grid_diff.toExponential(1)} (values ≤ ${p.max_grid_value.toFixed(1)})` : (p.labels_equal !== undefined ? `ids ${p.ids_equal}/${p.sentences}, labels ${p.labels_equal}, ` +
  `p ±${p.max_probability_diff.toExponential(0)}` : `ids ${p.target_ids_equal}/${p.sentences}`) +
  `, maps ${p.maps_within_tol}/${p.target_ids_equal} (max ${p.max_map_diff.toExponential(1)})` +
  (p.max_beta_diff !== undefined ? `, β max ${p.max_beta_diff.toExponential(1)}` : '');
const md = [
  `| model | workload | input | attnlens | onnxruntime-web | ratio (wall) | ratio (CPU) | parity |`,
  `|---|---|---|---|---|---|---|---|`,
  ...results.map((r) => `| ${r.model} | ${r.workload} | ${r.input} | ${fmt(r.attnlens)} ${r.unit} | ${fmt(r.ort)} ${r.unit} | ` +
    `**${r.ratio.toFixed(2)}×** | ${r.ratio_cpu.toFixed(2)}× | ${parityCell(r.parity)} |`),
  '',
  `Median of ${ROUNDS} rounds each (rates per wall second; ratio (CPU) from rates per process-CPU second), ratio of the ` +
    `medians (attnlens / onnxruntime-web; > 1: attnlens faster). ${machine}; ${new Date().toISOString().slice(0, 16)} UTC.`,
].join('\n');
writeFileSync(JSON_OUT, JSON.stringify({ machine, rounds: ROUNDS, n: N, results }, null, 2));
writeFileSync(MD_OUT, md + '\n');
console.log(md);

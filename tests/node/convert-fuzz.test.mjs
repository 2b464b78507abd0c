// A seeded mutation fuzzer over the converter's readers (wasm/convert/): config.json, the safetensors header, the
// sharded index (model.safetensors.index.json), the pickle inside pytorch_model.bin (data.pkl, mutated in place in
// the stored zip entry, and the zip structure around it), and the tokenizer files (tokenizer.json, vocab.txt,
// vocab.json, merges.txt, tokenizer_config.json) and ViT's preprocessor_config.json. Seeds: the folders of
// tests/fixtures/convert/. Mutations: flipped, inserted and deleted bytes, truncation, and for JSON files a value
// replaced by another (negative, huge, fractional, empty, null, nested, wrong type). The rule, for every input:
// convert() resolves with a bundle whose config.json, manifest.json and weights.safetensors parse, or rejects with a
// ConvertError — never another exception (TypeError, RangeError), never a hang (each input is timed).
//
// ATTNLENS_CONVERT_FUZZ_ITERATIONS (default 1200) sets the number of inputs, ATTNLENS_CONVERT_FUZZ_SEED (default 1)
// the seed: ATTNLENS_CONVERT_FUZZ_ITERATIONS=50000 ATTNLENS_CONVERT_FUZZ_SEED=7 node --test tests/node/convert-fuzz.test.mjs
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { convert, ConvertError } from '../../wasm/convert/index.js';
import { parseSafetensors } from '../../wasm/convert/safetensors.js';
import { parseManifest } from '../../wasm/models.js';
import { readZip } from '../../wasm/convert/torch-bin.js';
import { mulberry32 as rng } from './helpers.mjs';

const FIX = fileURLToPath(new URL('../fixtures/convert/', import.meta.url));
const ITERATIONS = Number(process.env.ATTNLENS_CONVERT_FUZZ_ITERATIONS ?? 1200);
const SEED = Number(process.env.ATTNLENS_CONVERT_FUZZ_SEED ?? 1);
const TIME_BOUND_MS = 5000; // per input; each converts in a few milliseconds

// [fixture, file to mutate]
const TARGETS = [['bert-cls', 'config.json'], ['gpt2-lm', 'config.json'], ['vit-cls', 'config.json'], ['distilbert-cls', 'config.json'],
  ['bert-base', 'model.safetensors'], ['gpt2-lm', 'model-00002-of-00002.safetensors'], ['gpt2-lm', 'model.safetensors.index.json'],
  ['bert-cls', 'pytorch_model.bin#data.pkl'], ['bert-cls', 'pytorch_model.bin'], ['bert-base', 'tokenizer.json'],
  ['bert-cls', 'vocab.txt'], ['bert-cls', 'tokenizer_config.json'], ['gpt2-lm', 'vocab.json'], ['gpt2-lm', 'merges.txt'],
  ['vit-cls', 'preprocessor_config.json']];

const folders = new Map();
function filesOf(name) {
  if (!folders.has(name)) {
    const dir = path.join(FIX, name);
    folders.set(name, Object.fromEntries(readdirSync(dir).map((f) => [f, new Uint8Array(readFileSync(path.join(dir, f)))])));
  }
  return { ...folders.get(name) };
}

const ODD_VALUES = [-1, 0, 1, 2.5, 1e308, -1e308, 2 ** 53, 4294967296, '', 'x', '__proto__', null, true, [], {}, [1, 2], [[[[]]]],
  { height: -1 }, 'gelu', 'absolute', ['BertModel'], { 0: 'A' }];

function mutateBytes(bytes, r, lo = 0, hi = bytes.length) {
  const b = bytes.slice();
  const at = () => lo + Math.floor(r() * Math.max(1, hi - lo));
  const kind = Math.floor(r() * 5);
  if (kind === 0) { // flip bytes
    for (let i = 0, n = 1 + Math.floor(r() * 4); i < n; i++) b[at()] ^= 1 << Math.floor(r() * 8);
    return { bytes: b, how: 'flip' };
  }
  if (kind === 1) { // a random byte value
    b[at()] = Math.floor(r() * 256);
    return { bytes: b, how: 'set' };
  }
  if (kind === 2) return { bytes: b.subarray(0, at()), how: 'truncate' };
  const p = at();
  if (kind === 3) { // delete a run
    const n = 1 + Math.floor(r() * 16);
    return { bytes: new Uint8Array([...b.subarray(0, p), ...b.subarray(p + n)]), how: 'delete' };
  }
  const ins = Uint8Array.from({ length: 1 + Math.floor(r() * 8) }, () => Math.floor(r() * 256)); // insert
  return { bytes: new Uint8Array([...b.subarray(0, p), ...ins, ...b.subarray(p)]), how: 'insert' };
}

function mutateJson(bytes, r) {
  const doc = JSON.parse(new TextDecoder().decode(bytes));
  const paths = [];
  const walk = (v, p) => {
    paths.push(p);
    if (v && typeof v === 'object' && paths.length < 5000) for (const k of Object.keys(v)) walk(v[k], [...p, k]);
  };
  walk(doc, []);
  const p = paths[1 + Math.floor(r() * (paths.length - 1))] ?? [];
  let o = doc;
  for (const k of p.slice(0, -1)) o = o[k];
  const value = ODD_VALUES[Math.floor(r() * ODD_VALUES.length)];
  if (p.length && r() < 0.2) delete o[p.at(-1)];
  else if (p.length) o[p.at(-1)] = value;
  return { bytes: new TextEncoder().encode(JSON.stringify(doc)), how: `json ${JSON.stringify(p)} = ${JSON.stringify(value)}` };
}

function mutate(files, file, r) {
  if (file.includes('#')) { // data.pkl inside the zip: mutate its stored bytes in place, keeping the zip's structure
    const [bin] = file.split('#');
    const entry = [...readZip(files[bin], bin)].find(([n]) => n.endsWith('/data.pkl'))[1];
    const m = mutateBytes(files[bin], r, entry.offset, entry.offset + entry.size);
    if (m.how === 'flip' || m.how === 'set') files[bin] = m.bytes;
    else { // resize data.pkl: rebuild nothing, just cut it short inside the entry (a truncated pickle)
      const b = files[bin].slice();
      b.fill(0x2e, entry.offset + Math.floor(r() * entry.size), entry.offset + entry.size); // STOP opcodes
      files[bin] = b;
      m.how = 'pickle cut short';
    }
    return m.how;
  }
  const isJson = file.endsWith('.json') && r() < 0.6;
  const m = isJson ? mutateJson(files[file], r) : mutateBytes(files[file], r);
  files[file] = m.bytes;
  return m.how;
}

test(`convert() on ${ITERATIONS} mutated folders (seed ${SEED}): a bundle or a ConvertError`, { timeout: 600_000 }, async () => {
  const r = rng(SEED);
  const outcomes = { converted: 0, refused: 0 };
  for (let i = 0; i < ITERATIONS; i++) {
    const [name, file] = TARGETS[i % TARGETS.length];
    const files = filesOf(name);
    const how = mutate(files, file, r);
    const label = `input ${i} (${name}/${file}, ${how})`;
    const started = Date.now();
    let result;
    try {
      result = await convert(files, { name });
    } catch (err) {
      assert.ok(err instanceof ConvertError, `${label}: threw ${err?.constructor?.name}: ${err?.stack ?? err}`);
      assert.ok(err.message.length > 10, `${label}: an empty message`);
      outcomes.refused++;
    }
    assert.ok(Date.now() - started < TIME_BOUND_MS, `${label}: took ${Date.now() - started} ms`);
    if (result) {
      JSON.parse(new TextDecoder().decode(result.files['config.json']));
      parseManifest(result.files['manifest.json'], name);
      parseSafetensors(result.files['weights.safetensors']);
      outcomes.converted++;
    }
  }
  assert.ok(outcomes.refused > ITERATIONS / 4 && outcomes.converted > ITERATIONS / 20,
    `both outcomes are exercised: ${JSON.stringify(outcomes)}`);
});

// The 'number-sorting' pipeline (wasm/pipelines/pointer.js over wasm/bindings_pointer.cpp): the golden lists of
// models/pointer-sort through the WASM engine against PyTorch (models/pointer-sort/golden.{json,safetensors}: output
// order exactly; preprocessed inputs, every step's pointer distribution and every encoder self-attention map within
// abs 1e-4), input forms (array, typed array, string), bad input (empty, "abc", NaN, too long, wrong types),
// options and dispose().
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { pipeline, listTasks } from '../../wasm/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOL = 1e-4;

function readSafetensors(path) {
  const buf = readFileSync(path);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  const start = 8 + n;
  const out = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    assert.equal(info.dtype, 'F32', `${path}: ${name} is not F32`);
    const [b, e] = info.data_offsets;
    const bytes = buf.subarray(start + b, start + e);
    const data = new Float32Array(bytes.byteLength / 4);
    new Uint8Array(data.buffer).set(bytes);
    out[name] = { dims: info.shape, data };
  }
  return out;
}

function assertClose(actual, expected, label) {
  assert.equal(actual.length, expected.length, `${label}: length`);
  let worst = 0;
  let at = -1;
  for (let i = 0; i < expected.length; i++) {
    const d = Math.abs(actual[i] - expected[i]);
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  assert.ok(worst <= TOL, `${label}: max |diff| ${worst} at ${at} (got ${actual[at]}, golden ${expected[at]})`);
}

const golden = JSON.parse(readFileSync(`${ROOT}models/pointer-sort/golden.json`, 'utf8'));
const tensors = readSafetensors(`${ROOT}models/pointer-sort/golden.safetensors`);

test('number-sorting is a task with pointer-sort as its model', () => {
  const t = listTasks().find((x) => x.task === 'number-sorting');
  assert.deepEqual(t, { task: 'number-sorting', defaultModel: 'pointer-sort', models: ['pointer-sort'], inPackage: ['pointer-sort'] });
});

test('pointer-sort: WASM engine equals PyTorch on every golden list (order, inputs, pointer and encoder maps)', async () => {
  const sort = await pipeline('pointer-sort');
  assert.equal(sort.task, 'number-sorting');
  assert.equal(sort.model, 'pointer-sort');
  assert.equal(sort.maxLength, 50);
  assert.ok(golden.cases.length >= 8);
  for (const [i, c] of golden.cases.entries()) {
    const key = `case${i}/`;
    const out = await sort(c.values);
    const n = c.values.length;
    assert.deepEqual(out.values, c.values);
    assert.deepEqual(out.order, c.order, `${key} order`);
    assert.deepEqual(out.sorted, c.sorted, `${key} sorted`);
    assert.equal(out.sorted_ok, c.sorted_ok);
    assertClose(out.inputs, tensors[`${key}inputs`].data, `${key}inputs`);
    const [pointer, ...enc] = out.attentions;
    assert.equal(pointer.name, 'pointer');
    assert.deepEqual(pointer.dims, [n, n]);
    assertClose(pointer.data, tensors[`${key}pointer`].data, `${key}pointer`);
    const g = tensors[`${key}encoder_self`];
    const [layers, heads] = g.dims;
    assert.equal(enc.length, layers * heads);
    const all = new Float32Array(enc.length * n * n);
    enc.forEach((m, k) => {
      assert.equal(m.name, 'encoder_self');
      assert.equal(m.layer, Math.floor(k / heads));
      assert.equal(m.head, k % heads);
      assert.deepEqual(m.dims, [n, n]);
      all.set(m.data, k * n * n);
    });
    assertClose(all, g.data, `${key}encoder_self`);
    for (let s = 0; s < n; s++) assert.equal(out.step_probabilities[s], pointer.data[s * n + out.order[s]]);
  }
  sort.dispose();
});

test('pointer-sort: strings, arrays and typed arrays give the same result; encoder_attentions: false', async () => {
  const sort = await pipeline('number-sorting', 'pointer-sort');
  const a = await sort([5, 3, 9, 1]);
  assert.deepEqual(a.sorted, [1, 3, 5, 9]);
  assert.deepEqual(a.order, [3, 1, 0, 2]);
  const b = await sort('5, 3 9;1');
  const c = await sort(Float64Array.of(5, 3, 9, 1));
  const d = await sort(Int32Array.of(5, 3, 9, 1));
  for (const r of [b, c, d]) {
    assert.deepEqual(r.order, a.order);
    assert.deepEqual(Array.from(r.attentions.at(0).data), Array.from(a.attentions.at(0).data));
  }
  const e = await sort([5, 3, 9, 1], { encoder_attentions: false });
  assert.equal(e.attentions.length, 1);
  assert.equal(e.attentions.at(0).name, 'pointer');
  const ties = await sort('2 1 2 1 2');
  assert.deepEqual(ties.order, [1, 3, 0, 2, 4], 'equal numbers keep their input order');
  sort.dispose();
});

test('pointer-sort: bad input is a clear error and the pipeline keeps working', async () => {
  const sort = await pipeline('sort');
  await assert.rejects(sort([]), { name: 'RangeError', message: /empty input/ });
  await assert.rejects(sort(''), { name: 'RangeError', message: /empty input/ });
  await assert.rejects(sort(' , ;'), { name: 'RangeError', message: /empty input/ });
  await assert.rejects(sort('1 abc 3'), { name: 'TypeError', message: /item 2 \("abc"\) is not a number/ });
  await assert.rejects(sort('1, NaN'), { name: 'TypeError', message: /item 2 \("NaN"\) is not a number/ });
  await assert.rejects(sort('1e999'), { name: 'RangeError', message: /too large/ });
  await assert.rejects(sort([1, 'two']), { name: 'TypeError', message: /item 2 must be a number/ });
  await assert.rejects(sort([1, NaN]), { name: 'RangeError', message: /item 2 is NaN/ });
  await assert.rejects(sort([Infinity]), { name: 'RangeError', message: /item 1 is Infinity/ });
  await assert.rejects(sort(Float32Array.of(1, NaN)), { name: 'RangeError', message: /item 2 is NaN/ });
  await assert.rejects(sort(new Array(51).fill(1)), { name: 'RangeError', message: /too many numbers: got 51, this model sorts at most 50/ });
  await assert.rejects(sort(42), { name: 'TypeError', message: /must be an array of numbers or a string/ });
  await assert.rejects(sort(null), { name: 'TypeError' });
  await assert.rejects(sort({ length: 2 }), { name: 'TypeError' });
  await assert.rejects(sort([1n, 2n]), { name: 'TypeError' });
  await assert.rejects(sort([1, 2], { beams: 2 }), { name: 'TypeError', message: /unknown number-sorting option "beams"/ });
  await assert.rejects(sort([1, 2], { encoder_attentions: 'yes' }), { name: 'TypeError' });
  const buf = new Float64Array([3, 1]);
  structuredClone(buf.buffer, { transfer: [buf.buffer] });
  await assert.rejects(sort(buf), { name: 'TypeError', message: /detached/ });
  const ok = await sort(new Array(50).fill(0).map((_, i) => (i * 37) % 50));
  assert.equal(ok.order.length, 50);
  assert.deepEqual([...ok.order].sort((x, y) => x - y), Array.from({ length: 50 }, (_, i) => i));
  assert.deepEqual((await sort([2, 1])).sorted, [1, 2]);
  sort.dispose();
  assert.equal(sort.disposed, true);
  await assert.rejects(sort([1, 2]), { message: /this number-sorting pipeline \(pointer-sort\) has been disposed/ });
});

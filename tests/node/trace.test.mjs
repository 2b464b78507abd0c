// AttentionMaps (wasm/trace.js): every task's maps come back as one arena per result — one Float32Array of values,
// one Int32Array index — with per-map views made on demand; the views keep their values after further calls and
// after dispose(); a kind reads as one [layers, heads, rows, columns] tensor; the object survives a structured clone
// with its buffers transferred (what the page's worker does).
import test from 'node:test';
import assert from 'node:assert/strict';

import { pipeline, AttentionMaps } from '../../wasm/index.js';
import { getModule } from '../../wasm/core.js';

let translate;
test.before(async () => {
  translate = await pipeline('translation', 'de-en-general');
});
test.after(() => translate?.dispose());

test('one arena per result: every map is a view into one values buffer outside the WASM heap', async () => {
  const out = await translate('Der Hund schläft im Garten.', { num_beams: 1 });
  const maps = out.attentions;
  assert.ok(maps instanceof AttentionMaps);
  assert.ok(maps.length > 10);
  assert.deepEqual(maps.kinds, ['encoder_self', 'decoder_self', 'cross']);
  const heap = getModule().HEAP8.buffer;
  assert.ok(heap.byteLength > 0);
  assert.notEqual(maps.values.buffer, heap, 'the values were copied out of the WASM heap');
  assert.ok(maps.values.buffer instanceof ArrayBuffer, 'an ordinary (transferable) buffer');
  let total = 0;
  for (let i = 0; i < maps.length; i++) {
    const m = maps.at(i);
    assert.equal(m.data.buffer, maps.values.buffer, `map ${i} is a view, not a copy`);
    assert.equal(m.data.length, m.dims.reduce((a, b) => a * b, 1));
    total += m.data.length;
  }
  assert.equal(total, maps.values.length, 'the maps cover the arena exactly');
  assert.equal(maps.at(-1).name, 'cross');
  assert.equal(maps.at(maps.length), undefined);
  // Same maps whichever way they are reached.
  const T = out.target_tokens.length;
  const S = out.source_tokens.length;
  const byCoords = maps.get('cross', { layer: 1, head: 2 });
  assert.deepEqual(byCoords.dims, [T, S]);
  const listed = [...maps].filter((m) => m.name === 'cross');
  const stacked = maps.stack('cross');
  const layers = new Set(listed.map((m) => m.layer)).size;
  assert.deepEqual(stacked.dims, [layers, listed.length / layers, T, S]);
  assert.equal(stacked.data.buffer, maps.values.buffer);
  for (const m of listed) {
    const at = (m.layer * stacked.dims[1] + m.head) * T * S;
    assert.deepEqual(Array.from(stacked.data.subarray(at, at + T * S)), Array.from(m.data), `cross ${m.layer}.${m.head}`);
  }
  assert.deepEqual(Array.from(byCoords.data), Array.from(listed.find((m) => m.layer === 1 && m.head === 2).data));
  assert.throws(() => maps.stack('visual'), /no 'visual' maps/);
});

test('views keep their values after further calls and after dispose()', async () => {
  const own = await pipeline('translation', 'de-en-general');
  const out = await own('Ein Mann fährt Fahrrad.', { num_beams: 1 });
  const first = out.attentions.get('cross', { layer: 0, head: 0 });
  const before = Array.from(first.data);
  const all = Array.from(out.attentions.values);
  for (const s of ['Zwei Kinder spielen.', 'Eine Frau liest ein Buch im Park, während es regnet.', 'Hallo!']) {
    await own(s, { num_beams: 4 });
  }
  own.dispose();
  assert.deepEqual(Array.from(first.data), before);
  assert.deepEqual(Array.from(out.attentions.values), all);
});

test('output_attentions: false and a list of kinds: the arena holds only what was asked', async () => {
  const none = await translate('Guten Morgen.', { output_attentions: false });
  assert.equal(none.attentions.length, 0);
  assert.equal(none.attentions.values.length, 0);
  const cross = await translate('Guten Morgen.', { output_attentions: ['cross'], head_mean: true });
  assert.deepEqual(cross.attentions.kinds, ['cross']);
  assert.ok(cross.attentions.every((m) => m.head === -1));
  const sum = cross.attentions.reduce((n, m) => n + m.data.length, 0);
  assert.equal(sum, cross.attentions.values.length);
});

test('AttentionMaps.from packs plain maps and rebuilds a structured clone; toJSON gives plain arrays', async () => {
  const out = await translate('Das ist gut.', { num_beams: 1 });
  const packed = AttentionMaps.from(out.attentions.toArray());
  assert.deepEqual(Array.from(packed.values), Array.from(out.attentions.values));
  assert.deepEqual(Array.from(packed.index), Array.from(out.attentions.index));
  const m = out.attentions;
  const clone = structuredClone({ kinds: m.kinds, index: m.index.slice(), values: m.values.slice() });
  const back = AttentionMaps.from(clone);
  assert.equal(back.length, m.length);
  assert.deepEqual(back.at(3), m.at(3));
  const moved = m.values.slice();
  const sent = structuredClone({ v: moved }, { transfer: [moved.buffer] });
  assert.equal(moved.length, 0, 'the buffer was moved, not copied');
  assert.equal(sent.v.length, m.values.length);
  const json = JSON.parse(JSON.stringify(m));
  assert.equal(json.length, m.length);
  assert.deepEqual(json[0].data, Array.from(m.at(0).data));
  assert.throws(() => AttentionMaps.from([{ name: 'x', dims: [2, 2], data: new Float32Array(3) }]), RangeError);
  assert.throws(() => new AttentionMaps({ kinds: [], index: new Int32Array(3), values: new Float32Array(0) }), TypeError);
});

test('every task returns its maps the same way', async () => {
  const classify = await pipeline('sentiment-analysis', 'sst2-selfattn');
  const sorter = await pipeline('number-sorting');
  try {
    const s = await classify('a charming and often affecting journey');
    const p = await sorter([5, 3, 9, 1]);
    for (const [what, maps] of [['sentiment', s.attentions], ['sorting', p.attentions]]) {
      assert.ok(maps instanceof AttentionMaps, what);
      assert.ok(maps.length >= 1, what);
      assert.equal(maps.at(0).data.buffer, maps.values.buffer, what);
    }
    assert.equal(p.attentions.at(0).name, 'pointer');
  } finally {
    classify.dispose();
    sorter.dispose();
  }
});

test('get(): a layer, head or step the maps lack is a RangeError naming the ones there are', async () => {
  const out = await translate('Der Hund schläft im Garten.', { num_beams: 1 });
  const maps = out.attentions;
  const layers = new Set(maps.filter((m) => m.name === 'cross').map((m) => m.layer)).size;
  const heads = maps.stack('cross').dims[1];
  assert.equal(maps.get('cross', { layer: layers - 1, head: heads - 1 }).layer, layers - 1, 'the last layer and head are there');
  assert.throws(() => maps.get('cross', { layer: layers }),
    { name: 'RangeError', message: `AttentionMaps.get: layer ${layers} is out of range: the 'cross' maps have layers 0–${layers - 1}` });
  assert.throws(() => maps.get('cross', { layer: 1, head: heads }),
    { name: 'RangeError', message: `AttentionMaps.get: head ${heads} is out of range: the 'cross' maps at layer 1 have heads 0–${heads - 1}` });
  assert.throws(() => maps.get('encoder_self', { head: -1 }), /head -1 is out of range: the 'encoder_self' maps have heads 0–/);
  assert.throws(() => maps.get('cross', { step: 0 }), /step 0 is out of range: the 'cross' maps have no step index \(step -1; leave step out\)/);
  assert.throws(() => maps.get('cross', { layer: '1' }), { name: 'TypeError', message: 'AttentionMaps.get: layer must be an integer, got "1"' });
  assert.throws(() => maps.get('cross', { head: 0.5 }), TypeError);
  assert.equal(maps.get('visual', { layer: 9 }), undefined, 'no maps of that kind: undefined, as before');
  // Maps with no layer index (one attention) and layers that are not a run.
  const one = AttentionMaps.from([{ name: 'self-attention', layer: -1, head: -1, dims: [2], data: [0.5, 0.5] }]);
  assert.equal(one.get('self-attention').dims[0], 2);
  assert.throws(() => one.get('self-attention', { layer: 0 }),
    /layer 0 is out of range: the 'self-attention' maps have no layer index \(layer -1; leave layer out\)/);
  const gaps = AttentionMaps.from([0, 2, 5].map((layer) => ({ name: 'x', layer, head: 0, dims: [1], data: [1] })));
  assert.throws(() => gaps.get('x', { layer: 1 }), /the 'x' maps have layers 0, 2, 5$/);
  assert.equal(gaps.get('x', { layer: 5 }).layer, 5);
});

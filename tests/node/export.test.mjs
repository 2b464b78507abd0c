// The page's export helpers (web/export.js) and URL state (web/state.js), as pure functions: the NumPy .npy writer
// (format 1.0 header byte by byte, little-endian float32 data), the maps JSON document, file names, XML escaping,
// and the query string that holds the page's state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { npyBytes, mapsDocument, fileName, escapeXml } from '../../web/export.js';
import { parseState, applyState } from '../../web/state.js';

/** A small .npy reader, independent of the writer: { descr, fortran, shape, data }. */
function readNpy(bytes) {
  assert.deepEqual([...bytes.subarray(0, 6)], [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59], 'magic \\x93NUMPY');
  assert.deepEqual([bytes[6], bytes[7]], [1, 0], 'version 1.0');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const hlen = view.getUint16(8, true);
  const header = new TextDecoder('latin1').decode(bytes.subarray(10, 10 + hlen));
  assert.equal((10 + hlen) % 64, 0, 'data aligned to 64 bytes');
  assert.ok(header.endsWith('\n'), 'header ends with a newline');
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)[1] === 'True';
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((x) => x.trim()).filter(Boolean).map(Number);
  const n = shape.reduce((a, b) => a * b, 1);
  assert.equal(bytes.length, 10 + hlen + 4 * n, 'file length = header + 4 bytes per value');
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = view.getFloat32(10 + hlen + 4 * i, true);
  return { header, descr, fortran, shape, data };
}

test('.npy: a 2 × 3 float32 map, header and data byte for byte', () => {
  const values = Float32Array.from([1, -2.5, 3, 0.125, 5, 1e-7]);
  const bytes = npyBytes(values, [2, 3]);
  const npy = readNpy(bytes);
  assert.equal(npy.header.trimEnd(), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  // 10 bytes of preamble + the 60-character dict + padding + '\n' = 128 bytes before the data.
  assert.equal(bytes.length, 128 + 24);
  assert.equal(bytes[8] | (bytes[9] << 8), 118, 'header length, little-endian uint16');
  assert.deepEqual({ descr: npy.descr, fortran: npy.fortran, shape: npy.shape }, { descr: '<f4', fortran: false, shape: [2, 3] });
  assert.deepEqual(npy.data, values);
  // 1.0f little-endian is 00 00 80 3f.
  assert.deepEqual([...bytes.subarray(128, 132)], [0x00, 0x00, 0x80, 0x3f]);
});

test('.npy: 1-D shapes use a trailing comma, plain arrays work, a long map pads to 64 bytes again', () => {
  const one = readNpy(npyBytes([0.5, 0.25, 0.25], [3]));
  assert.match(one.header, /'shape': \(3,\)/);
  assert.deepEqual(one.shape, [3]);
  assert.deepEqual([...one.data], [0.5, 0.25, 0.25]);
  const big = new Float32Array(37 * 41).map((_, i) => i / 7);
  const npy = readNpy(npyBytes(big, [37, 41]));
  assert.deepEqual(npy.shape, [37, 41]);
  assert.deepEqual(npy.data, big);
  assert.throws(() => npyBytes([1, 2, 3], [2, 2]), RangeError);
  assert.throws(() => npyBytes([1], [-1]), RangeError);
});

test('maps JSON: names, layer, head, dims, labels, data, tokens', () => {
  const data = Float32Array.from([0.75, 0.25, 0.5, 0.5]);
  const doc = JSON.parse(JSON.stringify(mapsDocument({
    task: 'translation', model: 'm', input: 'Hallo Welt', level: 'piece',
    tokens: { source: ['▁Hallo', '</s>'] },
    maps: [{ name: 'cross', layer: 1, head: 2, rows: 2, cols: 2, data, rowLabels: ['a', 'b'], colLabels: ['Hallo', '</s>'] }],
  })));
  assert.deepEqual(doc, {
    format: 'attnlens-maps', version: 1, task: 'translation', model: 'm', input: 'Hallo Welt', level: 'piece',
    tokens: { source: ['▁Hallo', '</s>'] },
    maps: [{ name: 'cross', layer: 1, head: 2, dims: [2, 2], rows: ['a', 'b'], cols: ['Hallo', '</s>'], data: [0.75, 0.25, 0.5, 0.5] }],
  });
  // The captioner: a word's image grid, no row/column tokens, the word as `token`.
  const grid = JSON.parse(JSON.stringify(mapsDocument({
    task: 'image-to-text', model: 'shapes', input: 'examples/shapes-1.png', level: 'word', tokens: { tokens: ['a', 'red'] },
    maps: [{ name: 'visual', layer: 0, head: 1, rows: 2, cols: 2, data: Float32Array.from([0.5, 0.25, 0.125, 0.125]), label: 'red' }],
  })));
  assert.deepEqual(grid.maps, [{ name: 'visual', layer: 0, head: 1, dims: [2, 2], rows: null, cols: null, data: [0.5, 0.25, 0.125, 0.125], token: 'red' }]);
});

test('file names and XML text are safe', () => {
  assert.equal(fileName('de-en-general', 'cross', 'L2', 'H3', undefined, ''), 'de-en-general-cross-L2-H3');
  assert.equal(fileName('a b/c', 'encoder_self'), 'a-b-c-encoder_self');
  assert.equal(escapeXml('<img src=x onerror="1">&\''), '&lt;img src=x onerror=&quot;1&quot;&gt;&amp;&apos;');
});

test('URL state: parse, apply (1-based layer/head in the URL), other parameters and order kept', () => {
  const s = applyState('?worker-timeout=5', { demo: 'translate', model: 'de-en-general', text: 'Wie geht es dir?',
    view: 'head', kind: 'cross', layer: 1, head: 2 });
  assert.equal(s, '?demo=translate&model=de-en-general&text=Wie+geht+es+dir%3F&view=head&kind=cross&layer=2&head=3&worker-timeout=5');
  assert.deepEqual(parseState(s), { demo: 'translate', model: 'de-en-general', text: 'Wie geht es dir?', view: 'head',
    kind: 'cross', layer: 1, head: 2 });
  assert.deepEqual(parseState(applyState(s, { head: undefined, layer: null, view: '' })),
    { demo: 'translate', model: 'de-en-general', text: 'Wie geht es dir?', kind: 'cross' });
  assert.deepEqual(parseState('?layer=0&head=x&demo=&bogus=1'), {}, 'bad numbers and empty values are ignored');
  assert.equal(applyState('', {}), '');
  // Another demo replaces the state (not the other parameters); the captioner's image and 1-based word.
  const cap = applyState(`${s}&test-hooks=1`, { demo: 'caption', model: 'shapes', image: 'examples/shapes-2.png', word: 2 });
  assert.equal(cap, '?demo=caption&model=shapes&image=examples%2Fshapes-2.png&word=3&worker-timeout=5&test-hooks=1');
  assert.deepEqual(parseState(cap), { demo: 'caption', model: 'shapes', image: 'examples/shapes-2.png', word: 2 });
  assert.equal(applyState(cap, { demo: 'caption', word: 0 }), cap.replace('word=3', 'word=1'), 'the same demo: a patch');
  assert.equal(applyState('', { nope: 1 }), '', 'unknown keys are not written');
});

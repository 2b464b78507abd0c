// Every catalogue op through the package's public entry, against the PyTorch goldens that the C++ tests use too
// (tests/goldens/attention/*.json, tolerance abs ≤ 1e-4 or rel ≤ 1e-3).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { init, attention, OP_NAMES } from '../../wasm/index.js';
import { methodName } from '../../wasm/attention.js';
import { loadAttentionGoldens, assertTensorClose } from './helpers.mjs';

const goldens = loadAttentionGoldens();

before(async () => {
  await init();
});

test('there are goldens, and every golden op is in the package catalogue', () => {
  assert.ok(goldens.length >= 20, `only ${goldens.length} golden files`);
  for (const g of goldens) {
    assert.ok(OP_NAMES.includes(g.op), `golden op ${g.op} (${g.file}) is not in OP_NAMES`);
    assert.equal(typeof attention[methodName(g.op)], 'function', `attention.${methodName(g.op)} is missing`);
  }
});

test('the JS catalogue and the WASM module list the same ops, each described', () => {
  const listed = attention.listOps();
  assert.deepEqual(listed.map((o) => o.name).sort(), [...OP_NAMES].sort());
  for (const op of listed) {
    assert.ok(op.formula.length > 0 && op.paper.length > 0, `${op.name} lacks a formula or a paper`);
    assert.ok(op.inputs.length > 0 && op.outputs.length > 0, `${op.name} lacks inputs or outputs`);
    assert.ok(['score', 'alignment', 'context', 'composite', 'analysis'].includes(op.family), `${op.name}: family ${op.family}`);
  }
});

for (const g of goldens) {
  test(`golden ${g.op}: ${g.cases.length} cases`, () => {
    const fn = attention[methodName(g.op)];
    for (const c of g.cases) {
      const out = fn(c.inputs, c.params);
      assert.deepEqual(Object.keys(out).sort().filter((k) => k in c.outputs), Object.keys(c.outputs).sort(),
        `${g.op}/${c.name}: outputs`);
      for (const [name, expected] of Object.entries(c.outputs)) {
        assertTensorClose(out[name], expected, `${g.op}/${c.name}/${name}`);
      }
    }
  });
}

test('soft_context reproduces key_value_attention\'s context from its weights', () => {
  // soft_context has no golden file of its own: c = Σ_j α_j v_j with the golden α must give the golden context.
  const kv = goldens.find((g) => g.op === 'key_value_attention');
  for (const c of kv.cases) {
    const out = attention.softContext({ weights: c.outputs.weights, values: c.inputs.values });
    assertTensorClose(out.context, c.outputs.context, `soft_context/${c.name}`);
  }
});

test('the generic run() gives the same result as the named method', () => {
  const g = goldens.find((x) => x.op === 'score_additive');
  const c = g.cases[0];
  const a = attention.run('score_additive', c.inputs, c.params);
  const b = attention.scoreAdditive(c.inputs, c.params);
  assert.deepEqual(a.scores.data, b.scores.data);
});

test('a single query may be given as a vector [d]: outputs drop the query axis', () => {
  const g = goldens.find((x) => x.op === 'score_dot');
  const c = g.cases.find((cc) => cc.inputs.q.dims[0] > 1) ?? g.cases[0];
  const d = c.inputs.q.dims[1];
  const nk = c.inputs.keys.dims[0];
  const row = { dims: [d], data: c.inputs.q.data.slice(d, 2 * d) };
  const out = attention.scoreDot({ q: row, keys: c.inputs.keys });
  assert.deepEqual(out.scores.dims, [nk]);
  if (c.inputs.q.dims[0] > 1) {
    assertTensorClose(out.scores, { dims: [nk], data: c.outputs.scores.data.slice(nk, 2 * nk) }, 'score_dot row 1');
  }
});

test('index.d.ts declares exactly the catalogue methods', async () => {
  const { readFileSync } = await import('node:fs');
  const dts = readFileSync(new URL('../../wasm/index.d.ts', import.meta.url), 'utf8');
  const declared = [...dts.matchAll(/^\s+(\w+)\(inputs: Tensors, params\?: Params\): Tensors;$/gm)].map((m) => m[1]).sort();
  assert.deepEqual(declared, OP_NAMES.map(methodName).sort());
  const union = [...dts.matchAll(/^\s+\| '(\w+)';?$/gm)].map((m) => m[1]).sort();
  assert.deepEqual(union, [...OP_NAMES].sort());
});

// The shipped module must contain real SIMD128 float arithmetic (issue 2, item 1): if a flag change made the
// kernels scalar, the package would still pass every numeric test while running several times slower.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countSimdInstructions, DEFAULT_WASM } from '../../scripts/check-simd.mjs';

test('wasm/dist/attnlens.wasm holds f32x4.mul and f32x4.add', () => {
  const counts = countSimdInstructions(DEFAULT_WASM);
  assert.ok((counts['f32x4.mul'] ?? 0) > 0, `no f32x4.mul in ${DEFAULT_WASM}; found ${JSON.stringify(counts)}`);
  assert.ok((counts['f32x4.add'] ?? 0) > 0, `no f32x4.add in ${DEFAULT_WASM}; found ${JSON.stringify(counts)}`);
});

// The caption overlay's colour scale, bilinear upsampling and peak cell (web/heat.js) on grids small enough to
// compute by hand. Pure functions: no browser, no WASM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HEAT_STOPS, heatColor, heatLayer, peakCell, upsampleBilinear } from '../../web/heat.js';

const close = (a, e, msg) => assert.ok(Math.abs(a - e) < 1e-6, `${msg}: ${a} ≠ ${e}`);

test('colour scale: the stops, linear in between, clamped', () => {
  assert.deepEqual(heatColor(0), HEAT_STOPS[0][1]);
  assert.deepEqual(heatColor(1), HEAT_STOPS[HEAT_STOPS.length - 1][1]);
  assert.deepEqual(heatColor(0.5), HEAT_STOPS[2][1]);
  // halfway between the stops at 0 and 0.25
  assert.deepEqual(heatColor(0.125), HEAT_STOPS[0][1].map((c, k) => Math.round((c + HEAT_STOPS[1][1][k]) / 2)));
  assert.deepEqual(heatColor(-3), heatColor(0));
  assert.deepEqual(heatColor(7), heatColor(1));
  assert.deepEqual(heatColor(NaN), heatColor(0));
  // brighter with more attention: the luminance grows along the scale
  const lum = ([r, g, b]) => 0.2126 * r + 0.7152 * g + 0.0722 * b;
  for (let i = 1; i <= 20; i++) assert.ok(lum(heatColor(i / 20)) > lum(heatColor((i - 1) / 20)), `step ${i}`);
});

test('bilinear upsampling: cell centres keep their values, linear in between, clamped at the border', () => {
  // a 1×2 grid [0, 1] to 1×4: sample points x = (d + 0.5)·2/4 − 0.5 = −0.25, 0.25, 0.75, 1.25 → clamp → 0, .25, .75, 1
  const a = upsampleBilinear([0, 1], 1, 2, 1, 4);
  [0, 0.25, 0.75, 1].forEach((v, i) => close(a[i], v, `x ${i}`));
  // a 2×2 grid to 2×2 is the grid itself; to 4×4 the inner 2×2 are bilinear mixes
  const g = [1, 2, 3, 4];
  assert.deepEqual(Array.from(upsampleBilinear(g, 2, 2, 2, 2)), g);
  const u = upsampleBilinear(g, 2, 2, 4, 4);
  close(u[0], 1, 'corner');
  close(u[15], 4, 'opposite corner');
  close(u[1 * 4 + 1], 0.75 * 0.75 * 1 + 0.75 * 0.25 * 2 + 0.25 * 0.75 * 3 + 0.25 * 0.25 * 4, 'inner (1, 1)');
  // a single hot cell of a 7×7 grid upsampled to 70×70: the maximum stays at its centre, never above the cell
  const hot = new Float32Array(49);
  hot[2 * 7 + 5] = 1;
  const big = upsampleBilinear(hot, 7, 7, 70, 70);
  let best = 0;
  for (let i = 0; i < big.length; i++) if (big[i] > big[best]) best = i;
  assert.ok(big[best] <= 1 && big[best] > 0.9);
  assert.equal(Math.floor(best / 70 / 10), 2, 'peak row');
  assert.equal(Math.floor((best % 70) / 10), 5, 'peak column');
  // smooth: neighbouring pixels differ by at most one cell's step / 10 pixels per cell
  for (let i = 1; i < 70; i++) assert.ok(Math.abs(big[25 * 70 + i] - big[25 * 70 + i - 1]) <= 0.1 + 1e-6);
  assert.throws(() => upsampleBilinear([1, 2, 3], 2, 2, 4, 4), RangeError);
  assert.throws(() => upsampleBilinear([1], 1, 1, 0, 4), RangeError);
});

test('peak cell: first maximum, NaN ignored, null when nothing is finite', () => {
  assert.deepEqual(peakCell([0.1, 0.5, 0.5, 0.2], 2), { index: 1, row: 0, col: 1, value: 0.5 });
  assert.deepEqual(peakCell([NaN, 0.2, 0.3, NaN], 2), { index: 2, row: 1, col: 0, value: 0.3 });
  assert.equal(peakCell([NaN, NaN], 2), null);
});

test('heat layer: peak opaque and bright, alpha scaled by the opacity', () => {
  const grid = [0, 0, 0, 1];
  const px = heatLayer(grid, 2, 2, 2, 2, 1);
  assert.deepEqual(Array.from(px.slice(12, 16)), [...heatColor(1), 255]);
  assert.deepEqual(Array.from(px.slice(0, 4)), [...heatColor(0), Math.round(255 * 0.25)]);
  const half = heatLayer(grid, 2, 2, 2, 2, 0.5);
  assert.equal(half[15], Math.round(255 * 0.5));
  assert.ok(heatLayer(grid, 2, 2, 2, 2, 0).every((v, i) => i % 4 !== 3 || v === 0), 'opacity 0: invisible');
  // a uniform grid is all peak: every pixel at the top of the scale
  const flat = heatLayer([0.25, 0.25, 0.25, 0.25], 2, 2, 3, 3, 1);
  for (let i = 0; i < 9; i++) assert.equal(flat[i * 4 + 3], 255);
});

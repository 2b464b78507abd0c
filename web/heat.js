// The caption overlay's colour scale and upsampling (caption.js): a word's attention grid (gh × gw cells, a
// distribution) → a smooth heat layer over the image. Pure functions: no DOM, tested in tests/node/heat.test.mjs.

// The colour scale: dark violet (no attention) → red → yellow (the word's peak cell). Stops at 0, ¼, ½, ¾, 1,
// linear in between (close to matplotlib's "inferno", which stays readable in grey and for colour-blind viewers).
export const HEAT_STOPS = [
  [0.00, [20, 11, 52]],
  [0.25, [106, 23, 110]],
  [0.50, [188, 55, 84]],
  [0.75, [249, 140, 10]],
  [1.00, [252, 255, 164]],
];

/** RGB of the scale at v ∈ [0, 1] (clamped; NaN counts as 0). */
export function heatColor(v) {
  const x = Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0;
  for (let i = 1; i < HEAT_STOPS.length; i++) {
    const [x1, c1] = HEAT_STOPS[i];
    if (x <= x1) {
      const [x0, c0] = HEAT_STOPS[i - 1];
      const w = (x - x0) / (x1 - x0);
      return c0.map((c, k) => Math.round(c + w * (c1[k] - c)));
    }
  }
  return [...HEAT_STOPS[HEAT_STOPS.length - 1][1]];
}

/**
 * Bilinear upsampling of a gh × gw grid (row-major) to outH × outW pixels, half-pixel centres: output pixel (y, x)
 * samples the grid at ((y + 0.5)·gh/outH − 0.5, (x + 0.5)·gw/outW − 0.5), clamped to the outer cell centres, so
 * each cell's value sits at its centre and fades linearly to its neighbours (no blocks, no ringing, no value outside
 * the grid's range). Returns a Float32Array [outH × outW].
 */
export function upsampleBilinear(data, gh, gw, outH, outW) {
  if (!(gh >= 1 && gw >= 1 && outH >= 1 && outW >= 1) || data.length !== gh * gw) {
    throw new RangeError(`upsampleBilinear: a ${gh}×${gw} grid needs ${gh * gw} values (got ${data.length}), ` +
      `output ${outH}×${outW}`);
  }
  const out = new Float32Array(outH * outW);
  const coord = (d, n, m) => {
    const s = Math.min(Math.max((d + 0.5) * (n / m) - 0.5, 0), n - 1);
    const i0 = Math.min(Math.floor(s), n - 1);
    return [i0, Math.min(i0 + 1, n - 1), s - i0];
  };
  const cols = Array.from({ length: outW }, (_, x) => coord(x, gw, outW));
  for (let y = 0; y < outH; y++) {
    const [r0, r1, wy] = coord(y, gh, outH);
    for (let x = 0; x < outW; x++) {
      const [c0, c1, wx] = cols[x];
      const top = (1 - wx) * data[r0 * gw + c0] + wx * data[r0 * gw + c1];
      const bottom = (1 - wx) * data[r1 * gw + c0] + wx * data[r1 * gw + c1];
      out[y * outW + x] = (1 - wy) * top + wy * bottom;
    }
  }
  return out;
}

/** The cell with the most attention (first of equal maxima; NaN cells never win): { index, row, col, value }. */
export function peakCell(data, gw) {
  let index = -1;
  for (let i = 0; i < data.length; i++) if (Number.isFinite(data[i]) && (index < 0 || data[i] > data[index])) index = i;
  if (index < 0) return null;
  return { index, row: Math.floor(index / gw), col: index % gw, value: data[index] };
}

/**
 * RGBA pixels [outH × outW × 4] of the heat layer for one word: colour heatColor(a / peak) and alpha
 * opacity·(0.25 + 0.75·a / peak), a the bilinearly upsampled attention, so the photo shows through where the word
 * did not look and the peak is the most opaque and brightest. opacity ∈ [0, 1].
 */
export function heatLayer(data, gh, gw, outH, outW, opacity) {
  const up = upsampleBilinear(data, gh, gw, outH, outW);
  const peak = peakCell(data, gw);
  const max = peak && peak.value > 0 ? peak.value : 1;
  const op = Number.isFinite(opacity) ? Math.min(1, Math.max(0, opacity)) : 0;
  const lut = Array.from({ length: 256 }, (_, i) => heatColor(i / 255));
  const px = new Uint8ClampedArray(outH * outW * 4);
  for (let i = 0; i < up.length; i++) {
    const v = Math.min(1, Math.max(0, up[i] / max));
    const [r, g, b] = lut[Math.round(v * 255)];
    px[i * 4] = r;
    px[i * 4 + 1] = g;
    px[i * 4 + 2] = b;
    px[i * 4 + 3] = Math.round(255 * op * (0.25 + 0.75 * v));
  }
  return px;
}

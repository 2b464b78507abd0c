// From a JPEG's coefficients to RGBA (wasm/pipelines/jpeg.js), computed the way libjpeg(-turbo) computes it by default
// — what Pillow and browsers show: the accurate integer inverse DCT ("islow", 13-bit constants, two passes), "fancy"
// (triangle-filter) chroma upsampling for 2:1 horizontal and/or vertical subsampling, and libjpeg's fixed-point
// YCbCr → RGB tables. So a JPEG decoded here gives the pixels Pillow gives (tests/node/images.test.mjs).

const CONST_BITS = 13;
const PASS1_BITS = 2;
const F0_298 = 2446, F0_390 = 3196, F0_541 = 4433, F0_765 = 6270, F0_899 = 7373, F1_175 = 9633, F1_501 = 12299,
  F1_847 = 15137, F1_961 = 16069, F2_053 = 16819, F2_562 = 20995, F3_072 = 25172;

const clamp = (v) => (v < 0 ? 0 : v > 255 ? 255 : v);

// One 1-D 8-point IDCT (libjpeg's jidctint.c) of in[o + k·step], k = 0..7, into out[p + k·ostep] descaled by `shift`.
function idct1(inp, o, step, out, p, ostep, shift, bias) {
  const half = 1 << (shift - 1);
  let z2 = inp[o + 2 * step], z3 = inp[o + 6 * step];
  let z1 = (z2 + z3) * F0_541;
  let tmp2 = z1 + z3 * -F1_847;
  let tmp3 = z1 + z2 * F0_765;
  z2 = inp[o]; z3 = inp[o + 4 * step];
  let tmp0 = (z2 + z3) * 8192;
  let tmp1 = (z2 - z3) * 8192;
  const t10 = tmp0 + tmp3, t13 = tmp0 - tmp3, t11 = tmp1 + tmp2, t12 = tmp1 - tmp2;
  tmp0 = inp[o + 7 * step]; tmp1 = inp[o + 5 * step]; tmp2 = inp[o + 3 * step]; tmp3 = inp[o + step];
  z1 = tmp0 + tmp3; z2 = tmp1 + tmp2; z3 = tmp0 + tmp2; let z4 = tmp1 + tmp3;
  const z5 = (z3 + z4) * F1_175;
  tmp0 *= F0_298; tmp1 *= F2_053; tmp2 *= F3_072; tmp3 *= F1_501;
  z1 *= -F0_899; z2 *= -F2_562; z3 *= -F1_961; z4 *= -F0_390;
  z3 += z5; z4 += z5;
  tmp0 += z1 + z3; tmp1 += z2 + z4; tmp2 += z2 + z3; tmp3 += z1 + z4;
  const d = (x) => Math.floor((x + half) / (1 << shift)) + bias;
  out[p] = d(t10 + tmp3); out[p + 7 * ostep] = d(t10 - tmp3);
  out[p + ostep] = d(t11 + tmp2); out[p + 6 * ostep] = d(t11 - tmp2);
  out[p + 2 * ostep] = d(t12 + tmp1); out[p + 5 * ostep] = d(t12 - tmp1);
  out[p + 3 * ostep] = d(t13 + tmp0); out[p + 4 * ostep] = d(t13 - tmp0);
}

/**
 * A component's samples: every block dequantised (q: 64 values, natural order) and inverse-transformed into a plane
 * of (stride·8) × (rows·8) bytes.
 */
export function componentPlane(comp, q) {
  const width = comp.stride * 8;
  const rows = comp.coef.length / 64 / comp.stride;
  const plane = new Uint8Array(width * rows * 8);
  const block = new Float64Array(64);
  const ws = new Float64Array(64);
  const out = new Float64Array(64);
  for (let b = 0; b < rows * comp.stride; b++) {
    const at = b * 64;
    let any = false;
    for (let i = 0; i < 64; i++) {
      block[i] = comp.coef[at + i] * q[i];
      if (i > 0 && comp.coef[at + i] !== 0) any = true;
    }
    if (!any) {
      const v = clamp(Math.floor(((block[0] * 4) * 8192 + (1 << 17)) / (1 << 18)) + 128);
      out.fill(v);
    } else {
      for (let c = 0; c < 8; c++) idct1(block, c, 8, ws, c, 8, CONST_BITS - PASS1_BITS, 0); // columns
      for (let r = 0; r < 8; r++) idct1(ws, r * 8, 1, out, r * 8, 1, CONST_BITS + PASS1_BITS + 3, 128); // rows
    }
    const x0 = (b % comp.stride) * 8;
    const y0 = Math.floor(b / comp.stride) * 8;
    for (let y = 0; y < 8; y++) {
      for (let x = 0; x < 8; x++) plane[(y0 + y) * width + x0 + x] = clamp(out[y * 8 + x]);
    }
  }
  return { data: plane, width, samplesWide: comp.samplesWide, samplesHigh: comp.samplesHigh };
}

/**
 * The component's plane at the image's full resolution (outW × outH): libjpeg's fancy upsampling where the factor is
 * 2 (h2v1, h1v2, h2v2; only when the component is more than 2 samples wide, as libjpeg), replication otherwise.
 */
export function upsample(plane, fx, fy, outW, outH) {
  const { data, width, samplesWide: w, samplesHigh: h } = plane;
  const at = (x, y) => data[Math.min(y, h - 1) * width + Math.min(x, w - 1)];
  const out = new Uint8Array(outW * outH);
  const fancy = (fx === 2 && (fy === 1 || fy === 2) && w > 2) || (fx === 1 && fy === 2);
  if (fx === 1 && fy === 1) {
    for (let y = 0; y < outH; y++) out.set(data.subarray(y * width, y * width + outW), y * outW);
    return out;
  }
  if (!fancy) {
    for (let y = 0; y < outH; y++) {
      for (let x = 0; x < outW; x++) out[y * outW + x] = at(Math.floor(x / fx), Math.floor(y / fy));
    }
    return out;
  }
  // Vertical: each output row mixes its sample row (×3) with the nearer neighbour row; horizontal likewise.
  for (let y = 0; y < outH; y++) {
    const sy = fy === 2 ? y >> 1 : y;
    const ny = fy === 2 ? (y & 1 ? Math.min(sy + 1, h - 1) : Math.max(sy - 1, 0)) : sy;
    const col = (x) => (fy === 2 ? at(x, sy) * 3 + at(x, ny) : at(x, sy));
    for (let x = 0; x < outW; x++) {
      let v;
      if (fx === 1) {
        v = (col(x) + (y & 1 ? 2 : 1)) >> 2; // h1v2
      } else {
        const sx = x >> 1;
        const nx = x & 1 ? Math.min(sx + 1, w - 1) : Math.max(sx - 1, 0);
        if (fy === 2) v = (col(sx) * 3 + col(nx) + (x & 1 ? 7 : 8)) >> 4; // h2v2
        else v = (at(sx, sy) * 3 + at(nx, sy) + (x & 1 ? 2 : 1)) >> 2; // h2v1
      }
      out[y * outW + x] = v;
    }
  }
  return out;
}

let tables;
function ycc() {
  if (tables) return tables;
  const fix = (x) => Math.round(x * 65536);
  const cr = new Int32Array(256), cb = new Int32Array(256), crg = new Int32Array(256), cbg = new Int32Array(256);
  for (let i = 0; i < 256; i++) {
    const x = i - 128;
    cr[i] = (fix(1.402) * x + 32768) >> 16;
    cb[i] = (fix(1.772) * x + 32768) >> 16;
    crg[i] = -fix(0.71414) * x;
    cbg[i] = -fix(0.34414) * x + 32768;
  }
  tables = { cr, cb, crg, cbg };
  return tables;
}

/**
 * Full-resolution planes → RGBA. transform: 'ycc' (YCbCr), 'rgb', 'cmyk', 'ycck' or 'grey'; inverted: Adobe CMYK
 * (stored inverted, as Photoshop writes it).
 */
export function toRgba(planes, n, transform, inverted) {
  const out = new Uint8Array(n * 4);
  const t = ycc();
  const [p0, p1, p2, p3] = planes;
  for (let i = 0, o = 0; i < n; i++, o += 4) {
    let r, g, b;
    if (transform === 'grey') {
      r = g = b = p0[i];
    } else if (transform === 'rgb' || transform === 'cmyk') {
      r = p0[i]; g = p1[i]; b = p2[i];
    } else {
      const y = p0[i], cb = p1[i], cr = p2[i];
      r = clamp(y + t.cr[cr]);
      g = clamp(y + ((t.cbg[cb] + t.crg[cr]) >> 16));
      b = clamp(y + t.cb[cb]);
    }
    if (transform === 'cmyk' || transform === 'ycck') {
      // c, m, y, k as stored ((inverted) Adobe: 255 = no ink) → RGB, as Pillow converts CMYK
      const k = inverted ? p3[i] : 255 - p3[i];
      const ink = (v) => (transform === 'ycck' ? 255 - v : v); // YCCK holds 255 − CMY as YCbCr
      const c = inverted ? ink(r) : 255 - ink(r), m = inverted ? ink(g) : 255 - ink(g), yy = inverted ? ink(b) : 255 - ink(b);
      r = Math.round((c * k) / 255); g = Math.round((m * k) / 255); b = Math.round((yy * k) / 255);
    }
    out[o] = r; out[o + 1] = g; out[o + 2] = b; out[o + 3] = 255;
  }
  return out;
}

// EXIF orientation for the Node image decoders (wasm/pipelines/image.js): the Orientation tag (0x0112) read from a
// TIFF structure (a JPEG's APP1 "Exif" segment, a PNG's eXIf chunk), and RGBA pixels turned upright by it.
// A missing, malformed or out-of-range tag means orientation 1 (as browsers treat it): a broken EXIF block never
// makes an image fail. Every read is bounds-checked.

const ORIENTATION_TAG = 0x0112;

/**
 * The Orientation value 1–8 of the TIFF structure in bytes[start, end), or 1.
 * @param {Uint8Array} bytes
 */
export function tiffOrientation(bytes, start = 0, end = bytes.length) {
  if (end - start < 8) return 1;
  const view = new DataView(bytes.buffer, bytes.byteOffset + start, end - start);
  const order = view.getUint16(0);
  if (order !== 0x4949 && order !== 0x4d4d) return 1; // "II" little-endian, "MM" big-endian
  const little = order === 0x4949;
  if (view.getUint16(2, little) !== 42) return 1;
  const ifd = view.getUint32(4, little);
  if (ifd < 8 || ifd + 2 > view.byteLength) return 1;
  const count = view.getUint16(ifd, little);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + 12 * i;
    if (entry + 12 > view.byteLength) return 1;
    if (view.getUint16(entry, little) !== ORIENTATION_TAG) continue;
    const type = view.getUint16(entry + 2, little);
    const value = type === 3 ? view.getUint16(entry + 8, little) : type === 4 ? view.getUint32(entry + 8, little) : 0;
    return value >= 1 && value <= 8 ? value : 1;
  }
  return 1;
}

// For orientation o, where displayed pixel (x, y) of the upright image is in the stored one (W × H pixels): the
// stored index of (0, 0), and the steps in stored indices for x + 1 and y + 1.
const STEPS = {
  2: (w) => [w - 1, -1, w],
  3: (w, h) => [(h - 1) * w + w - 1, -1, -w],
  4: (w, h) => [(h - 1) * w, 1, -w],
  5: (w) => [0, w, 1],
  6: (w, h) => [(h - 1) * w, -w, 1],
  7: (w, h) => [(h - 1) * w + w - 1, -w, -1],
  8: (w) => [w - 1, w, -1],
};

/**
 * RGBA pixels { data, width, height } shown the way EXIF orientation `o` says (1: as stored; 5–8 swap the sides).
 * @returns {{ data: Uint8Array, width: number, height: number }}
 */
export function orient(px, o) {
  if (!STEPS[o]) return px;
  const { width: w, height: h } = px;
  const [start, dx, dy] = STEPS[o](w, h);
  const ow = o >= 5 ? h : w;
  const oh = o >= 5 ? w : h;
  const aligned = px.data.byteOffset % 4 === 0 ? px.data : px.data.slice();
  const src = new Uint32Array(aligned.buffer, aligned.byteOffset, w * h);
  const out = new Uint8Array(ow * oh * 4);
  const dst = new Uint32Array(out.buffer);
  for (let y = 0, i = 0; y < oh; y++) {
    for (let x = 0, s = start + y * dy; x < ow; x++, s += dx) dst[i++] = src[s];
  }
  return { data: out, width: ow, height: oh };
}

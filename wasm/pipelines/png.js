// A PNG decoder for the Node image path (wasm/pipelines/image.js): every PNG colour type and bit depth (grey 1/2/4/8/16,
// RGB 8/16, palette 1/2/4/8 with tRNS, grey+alpha and RGBA 8/16), Adam7 interlacing, all five filters, eXIf
// orientation. Output: 8-bit RGBA (16-bit samples keep their high byte, as Pillow does). The zlib inflate is handed
// in (node:zlib's inflateSync), so this module imports nothing.
//
// Strict, and bounded: every chunk's length and CRC are checked, the IHDR fields validated, the inflated data must be
// exactly the size the header implies (inflate stops at that size, so a small file cannot inflate into a huge
// buffer), and a missing IEND is an error (a truncated file). Errors are plain Errors whose message starts "PNG:";
// the caller adds the pipeline's name.

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const CHANNELS = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const DEPTHS = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };
const ADAM7 = [[0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2]];

const fail = (why) => new Error(`PNG: ${why}`);

/** True when bytes start with the PNG signature. */
export const isPng = (bytes) => bytes.length >= 8 && SIGNATURE.every((b, i) => bytes[i] === b);

let crcTable;
function crc32(bytes, start, end) {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = crcTable[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** { width, height } from the IHDR chunk, without reading further (for the size limit before any allocation). */
export function pngSize(bytes) {
  if (bytes.length < 33) throw fail('the file is truncated (no complete IHDR chunk)');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(8) !== 13 || String.fromCharCode(...bytes.subarray(12, 16)) !== 'IHDR') {
    throw fail('the first chunk is not a 13-byte IHDR');
  }
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

// The chunks: { header, palette, trns, idat: Uint8Array[], exif } — lengths, CRCs and order checked.
function readChunks(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const found = { idat: [] };
  for (let at = 8; ;) {
    if (at + 12 > bytes.length) throw fail('the file is truncated (it ends before the IEND chunk)');
    const length = view.getUint32(at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    if (length > bytes.length - at - 12) throw fail(`the ${type} chunk claims ${length} bytes; the file is truncated or corrupt`);
    if (!/^[A-Za-z]{4}$/.test(type)) throw fail('a chunk has an invalid type (corrupt file)');
    const body = bytes.subarray(at + 8, at + 8 + length);
    if (crc32(bytes, at + 4, at + 8 + length) !== view.getUint32(at + 8 + length)) throw fail(`bad CRC in the ${type} chunk (corrupt file)`);
    at += 12 + length;
    if (type === 'IEND') return found;
    if (type === 'IHDR') found.header = body;
    else if (!found.header) throw fail('the first chunk is not IHDR');
    else if (type === 'PLTE') found.palette = body;
    else if (type === 'tRNS') found.trns = body;
    else if (type === 'IDAT') found.idat.push(body);
    else if (type === 'eXIf') found.exif = body;
    else if (type[0] === type[0].toUpperCase()) throw fail(`unsupported critical chunk ${type}`);
  }
}

function checkHeader(h, chunks) {
  const view = new DataView(h.buffer, h.byteOffset, h.byteLength);
  const width = view.getUint32(0);
  const height = view.getUint32(4);
  const [depth, colorType, compression, filter, interlace] = h.subarray(8, 13);
  if (width === 0 || height === 0) throw fail(`the image is empty (${width}x${height})`);
  if (!DEPTHS[colorType]) throw fail(`invalid colour type ${colorType}`);
  if (!DEPTHS[colorType].includes(depth)) throw fail(`invalid bit depth ${depth} for colour type ${colorType}`);
  if (compression !== 0 || filter !== 0 || interlace > 1) throw fail('invalid compression, filter or interlace method');
  if (colorType === 3 && (!chunks.palette || chunks.palette.length % 3 !== 0 || chunks.palette.length > 768)) {
    throw fail('a palette image without a valid PLTE chunk');
  }
  if (chunks.idat.length === 0) throw fail('no image data (IDAT chunk)');
  return { width, height, depth, colorType, interlace, channels: CHANNELS[colorType] };
}

// The passes of the image ([x0, y0, dx, dy, columns, rows, bytes per row]): one, or Adam7's seven (empty ones dropped).
function passesOf({ width, height, depth, channels, interlace }) {
  return (interlace ? ADAM7 : [[0, 0, 1, 1]]).map(([x0, y0, dx, dy]) => {
    const cols = Math.ceil((width - x0) / dx);
    const rows = Math.ceil((height - y0) / dy);
    return [x0, y0, dx, dy, cols, rows, Math.ceil((cols * channels * depth) / 8)];
  }).filter((p) => p[4] > 0 && p[5] > 0);
}

// Undoes the filters of `rows` rows of `stride` bytes (each after its filter-type byte) at raw[start…], in place.
function unfilter(raw, start, rows, stride, bpp) {
  for (let r = 0; r < rows; r++) {
    const at = start + r * (stride + 1);
    const type = raw[at];
    const cur = at + 1;
    const prev = r > 0 ? cur - stride - 1 : -1;
    if (type > 4) throw fail(`invalid filter type ${type} (corrupt image data)`);
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? raw[cur + i - bpp] : 0;
      const b = prev >= 0 ? raw[prev + i] : 0;
      const c = prev >= 0 && i >= bpp ? raw[prev + i - bpp] : 0;
      let pred = 0;
      if (type === 1) pred = a;
      else if (type === 2) pred = b;
      else if (type === 3) pred = (a + b) >> 1;
      else if (type === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      raw[cur + i] = (raw[cur + i] + pred) & 0xff;
    }
  }
}

// Sample k of a row at `depth` bits (MSB first below 8 bits), at full depth.
function sample(raw, at, k, depth) {
  if (depth === 8) return raw[at + k];
  if (depth === 16) return (raw[at + 2 * k] << 8) | raw[at + 2 * k + 1];
  const bit = k * depth;
  return (raw[at + (bit >> 3)] >> (8 - depth - (bit & 7))) & ((1 << depth) - 1);
}

// The RGBA writer of one pixel for the image's colour type: (samples at full depth) → out[o…o+3].
function pixelWriter({ colorType, depth }, palette, trns) {
  const to8 = depth === 16 ? (v) => v >> 8 : (v) => Math.round((v * 255) / ((1 << depth) - 1));
  const key = (i) => (trns && trns.length >= 2 * (i + 1) ? (trns[2 * i] << 8) | trns[2 * i + 1] : -1);
  if (colorType === 0) {
    const k = key(0);
    return (out, o, s) => { const g = to8(s[0]); out[o] = g; out[o + 1] = g; out[o + 2] = g; out[o + 3] = s[0] === k ? 0 : 255; };
  }
  if (colorType === 2) {
    const [kr, kg, kb] = [key(0), key(1), key(2)];
    return (out, o, s) => {
      out[o] = to8(s[0]); out[o + 1] = to8(s[1]); out[o + 2] = to8(s[2]);
      out[o + 3] = s[0] === kr && s[1] === kg && s[2] === kb ? 0 : 255;
    };
  }
  if (colorType === 3) {
    const entries = palette.length / 3;
    return (out, o, s) => {
      const i = s[0];
      if (i >= entries) { out[o] = 0; out[o + 1] = 0; out[o + 2] = 0; out[o + 3] = 255; return; } // as browsers: black
      out[o] = palette[3 * i]; out[o + 1] = palette[3 * i + 1]; out[o + 2] = palette[3 * i + 2];
      out[o + 3] = trns && i < trns.length ? trns[i] : 255;
    };
  }
  if (colorType === 4) {
    return (out, o, s) => { const g = to8(s[0]); out[o] = g; out[o + 1] = g; out[o + 2] = g; out[o + 3] = to8(s[1]); };
  }
  return (out, o, s) => { out[o] = to8(s[0]); out[o + 1] = to8(s[1]); out[o + 2] = to8(s[2]); out[o + 3] = to8(s[3]); };
}

// Expands the unfiltered passes of raw into RGBA.
function expand(raw, info, passes, write) {
  const { width, height, depth, channels } = info;
  const out = new Uint8Array(width * height * 4);
  const s = new Array(channels);
  let at = 0;
  for (const [x0, y0, dx, dy, cols, rows, stride] of passes) {
    for (let r = 0; r < rows; r++, at += stride + 1) {
      const y = y0 + r * dy;
      for (let c = 0; c < cols; c++) {
        for (let k = 0; k < channels; k++) s[k] = sample(raw, at + 1, c * channels + k, depth);
        write(out, 4 * (y * width + x0 + c * dx), s);
      }
    }
  }
  return out;
}

/**
 * PNG bytes → { data: RGBA Uint8Array, width, height, exif?: Uint8Array (the eXIf chunk) }.
 * @param {Uint8Array} bytes
 * @param {(deflated: Uint8Array, maxOutputLength: number) => Uint8Array} inflate
 */
export function decodePng(bytes, inflate) {
  if (!isPng(bytes)) throw fail('not a PNG file');
  const chunks = readChunks(bytes);
  if (!chunks.header || chunks.header.length !== 13) throw fail('no valid IHDR chunk');
  const info = checkHeader(chunks.header, chunks);
  const passes = passesOf(info);
  const expected = passes.reduce((n, p) => n + p[5] * (p[6] + 1), 0);
  const deflated = chunks.idat.length === 1 ? chunks.idat[0] : concat(chunks.idat);
  let raw;
  try {
    raw = inflate(deflated, expected);
  } catch (err) {
    throw fail(`the image data does not inflate (${err?.code === 'ERR_BUFFER_TOO_LARGE' ? 'more data than the header\'s size' : err?.message ?? err})`);
  }
  if (raw.length !== expected) throw fail(`the image data has ${raw.length} bytes; the header's size needs ${expected} (truncated or corrupt)`);
  const bpp = Math.max(1, (info.channels * info.depth) >> 3);
  let at = 0;
  for (const [, , , , , rows, stride] of passes) {
    unfilter(raw, at, rows, stride, bpp);
    at += rows * (stride + 1);
  }
  const data = expand(raw, info, passes, pixelWriter(info, chunks.palette, chunks.trns));
  return { data, width: info.width, height: info.height, exif: chunks.exif };
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

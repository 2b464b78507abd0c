// A JPEG decoder for the Node image path (wasm/pipelines/image.js), written from ITU T.81: baseline, extended and
// progressive Huffman JPEG, 1 (grey), 3 (YCbCr or RGB) or 4 (CMYK, YCCK) components, any sampling factors, restart
// intervals, EXIF orientation. This module reads the markers (jpegInfo: the frame size before anything is allocated);
// jpeg-scan.js decodes the entropy-coded scans, jpeg-pixels.js turns coefficients into RGBA as libjpeg does.
// Errors are plain Errors whose message starts "JPEG:"; the caller adds the pipeline's name.
import { tiffOrientation } from './orientation.js';
import { ZIGZAG, huffmanTable, decodeScan } from './jpeg-scan.js';
import { componentPlane, toRgba, upsample } from './jpeg-pixels.js';

const fail = (why) => new Error(`JPEG: ${why}`);
// Start-of-frame markers: C0 baseline, C1 extended, C2 progressive (Huffman, decoded here); the others are
// lossless, hierarchical or arithmetic-coded. C4 (DHT), C8 (JPG) and CC (DAC) are not frames.
const DECODED = new Set([0xc0, 0xc1, 0xc2]);
const isFrame = (m) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

/** True when bytes start with a JPEG start-of-image marker. */
export const isJpeg = (bytes) => bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;

const EXIF = [0x45, 0x78, 0x69, 0x66, 0, 0]; // "Exif\0\0"

/**
 * The frame header: { width, height, orientation (EXIF, 1–8), progressive }. Throws for a truncated or corrupt
 * header, and for JPEG codings not decoded here (arithmetic, lossless, hierarchical, 12-bit).
 * @param {Uint8Array} bytes
 */
export function jpegInfo(bytes) {
  let orientation = 1;
  for (let at = 2; ;) {
    while (at < bytes.length && bytes[at] === 0xff && bytes[at + 1] === 0xff) at++; // fill bytes
    if (at + 4 > bytes.length) throw fail('the file is truncated (it ends before the frame header)');
    if (bytes[at] !== 0xff) throw fail(`corrupt header (no marker at byte ${at})`);
    const marker = bytes[at + 1];
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) { at += 2; continue; } // no length
    if (marker === 0xd9 || marker === 0xda) throw fail('no frame header before the image data');
    const length = (bytes[at + 2] << 8) | bytes[at + 3];
    const end = at + 2 + length;
    if (length < 2 || end > bytes.length) throw fail('the file is truncated or corrupt (a segment runs past its end)');
    if (marker === 0xe1 && length >= 8 && EXIF.every((b, i) => bytes[at + 4 + i] === b)) {
      orientation = tiffOrientation(bytes, at + 10, end);
    }
    if (isFrame(marker)) return frame(bytes, at, length, marker, orientation);
    at = end;
  }
}

function frame(bytes, at, length, marker, orientation) {
  if (length < 8) throw fail('the frame header is truncated');
  if (!DECODED.has(marker)) {
    throw fail(`unsupported coding (frame type 0x${marker.toString(16).toUpperCase()}: arithmetic, lossless or ` +
      'hierarchical); baseline and progressive Huffman JPEG are decoded');
  }
  const precision = bytes[at + 4];
  if (precision !== 8) throw fail(`unsupported sample precision ${precision} bits (8 is decoded)`);
  const height = (bytes[at + 5] << 8) | bytes[at + 6];
  const width = (bytes[at + 7] << 8) | bytes[at + 8];
  if (height === 0 || width === 0) throw fail(`unsupported or empty frame size ${width}x${height}`);
  return { width, height, orientation, progressive: marker === 0xc2 };
}

// ---- markers ----------------------------------------------------------------------------------------------------

// The frame's components with their block geometry and coefficient arrays (T.81 A.1.1).
function readFrame(bytes, at, length, marker) {
  const height = (bytes[at + 5] << 8) | bytes[at + 6];
  const width = (bytes[at + 7] << 8) | bytes[at + 8];
  const n = bytes[at + 9];
  if (![1, 3, 4].includes(n) || length < 8 + 3 * n) throw fail(`unsupported or corrupt frame (${n} components)`);
  const components = [];
  for (let i = 0; i < n; i++) {
    const o = at + 10 + 3 * i;
    const h = bytes[o + 1] >> 4, v = bytes[o + 1] & 15;
    if (h < 1 || h > 4 || v < 1 || v > 4) throw fail('corrupt frame (a sampling factor outside 1..4)');
    components.push({ id: bytes[o], h, v, tq: bytes[o + 2] & 3 });
  }
  const maxH = Math.max(...components.map((c) => c.h));
  const maxV = Math.max(...components.map((c) => c.v));
  const mcusPerLine = Math.ceil(width / (8 * maxH));
  const mcusPerColumn = Math.ceil(height / (8 * maxV));
  for (const c of components) {
    if (maxH % c.h !== 0 || maxV % c.v !== 0) throw fail('unsupported fractional sampling factors');
    c.samplesWide = Math.ceil((width * c.h) / maxH);
    c.samplesHigh = Math.ceil((height * c.v) / maxV);
    c.blocksPerLine = Math.ceil(c.samplesWide / 8);
    c.blocksPerColumn = Math.ceil(c.samplesHigh / 8);
    c.stride = mcusPerLine * c.h;
    c.coef = new Int16Array(c.stride * mcusPerColumn * c.v * 64);
  }
  return { width, height, progressive: marker === 0xc2, components, maxH, maxV, mcusPerLine, mcusPerColumn };
}

// DQT: up to four tables of 64 values (8 or 16 bits), stored here in natural order.
function readQuant(bytes, at, end, quant) {
  for (let p = at; p < end;) {
    const wide = bytes[p] >> 4;
    const id = bytes[p] & 3;
    const size = wide ? 128 : 64;
    if (wide > 1 || p + 1 + size > end) throw fail('corrupt quantisation table');
    const q = new Int32Array(64);
    for (let k = 0; k < 64; k++) q[ZIGZAG[k]] = wide ? (bytes[p + 1 + 2 * k] << 8) | bytes[p + 2 + 2 * k] : bytes[p + 1 + k];
    quant[id] = q;
    p += 1 + size;
  }
}

// DHT: Huffman tables (class 0 DC, 1 AC; ids 0..3).
function readHuffman(bytes, at, end, dc, ac) {
  for (let p = at; p < end;) {
    if (p + 17 > end) throw fail('corrupt Huffman table (truncated)');
    const cls = bytes[p] >> 4;
    const id = bytes[p] & 15;
    const counts = bytes.subarray(p + 1, p + 17);
    const total = counts.reduce((a, b) => a + b, 0);
    if (cls > 1 || id > 3 || total > 256 || p + 17 + total > end) throw fail('corrupt Huffman table');
    (cls === 0 ? dc : ac)[id] = huffmanTable(counts, bytes.subarray(p + 17, p + 17 + total));
    p += 17 + total;
  }
}

// SOS: the scan's components and spectral selection; its data starts at `end`.
function readScan(bytes, at, end, frame, tables) {
  const n = bytes[at + 4];
  if (n < 1 || n > 4 || at + 5 + 2 * n + 3 > end) throw fail('corrupt scan header');
  const components = [];
  for (let i = 0; i < n; i++) {
    const o = at + 5 + 2 * i;
    const component = frame.components.find((c) => c.id === bytes[o]);
    if (!component) throw fail('a scan names a component the frame does not have');
    components.push({ component, dc: tables.dc[bytes[o + 1] >> 4], ac: tables.ac[bytes[o + 1] & 15] });
  }
  const o = at + 5 + 2 * n;
  const scan = { components, ss: bytes[o], se: bytes[o + 1], ah: bytes[o + 2] >> 4, al: bytes[o + 2] & 15,
    restart: tables.restart, start: end };
  if (frame.progressive) {
    const dcScan = scan.ss === 0;
    if (scan.se > 63 || scan.ss > scan.se || (dcScan && scan.se !== 0) || (!dcScan && n !== 1) || scan.al > 13) {
      throw fail('corrupt progressive scan header');
    }
  } else {
    scan.ss = 0;
    scan.se = 63;
  }
  return scan;
}

function colourTransform(frame, adobe, jfif) {
  const n = frame.components.length;
  if (n === 1) return 'grey';
  const ids = frame.components.map((c) => c.id);
  if (n === 3) {
    if (jfif) return 'ycc';
    if (adobe) return adobe.transform ? 'ycc' : 'rgb';
    return ids[0] === 82 && ids[1] === 71 && ids[2] === 66 ? 'rgb' : 'ycc';
  }
  return adobe && adobe.transform === 2 ? 'ycck' : 'cmyk';
}

// Reads every segment, decoding each scan as it comes: { frame, quant, adobe, jfif }.
function readAll(bytes) {
  const tables = { dc: [], ac: [], restart: 0 };
  const quant = [];
  let frame = null, adobe = null, jfif = false;
  for (let at = 2; at < bytes.length;) {
    if (bytes[at] !== 0xff) { at++; continue; } // garbage between segments, as libjpeg skips it
    const marker = bytes[at + 1];
    if (marker === 0xff || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) { at += marker === 0xff ? 1 : 2; continue; }
    if (marker === 0xd9) break;
    if (at + 4 > bytes.length) throw fail('the file is truncated (it ends inside a segment header)');
    const end = at + 2 + ((bytes[at + 2] << 8) | bytes[at + 3]);
    if (end > bytes.length || end < at + 4) throw fail('the file is truncated or corrupt (a segment runs past its end)');
    if (marker === 0xdb) readQuant(bytes, at + 4, end, quant);
    else if (marker === 0xc4) readHuffman(bytes, at + 4, end, tables.dc, tables.ac);
    else if (marker === 0xdd) tables.restart = (bytes[at + 4] << 8) | bytes[at + 5];
    else if (marker === 0xe0 && bytes[at + 4] === 0x4a && bytes[at + 5] === 0x46) jfif = true;
    else if (marker === 0xee && bytes[at + 4] === 0x41 && end - at >= 16) adobe = { transform: bytes[at + 15] };
    else if (isFrame(marker)) {
      if (frame) throw fail('more than one frame (hierarchical JPEG is not decoded)');
      frame = readFrame(bytes, at, end - at - 2, marker);
    } else if (marker === 0xda) {
      if (!frame) throw fail('image data before the frame header');
      at = decodeScan(bytes, frame, readScan(bytes, at, end, frame, tables));
      frame.scans = (frame.scans ?? 0) + 1;
      continue;
    }
    at = end;
  }
  if (!frame || !frame.scans) throw fail('the file is truncated (no image data)');
  return { frame, quant, adobe, jfif };
}

/**
 * JPEG bytes → { data: RGBA Uint8Array, width, height } (not yet oriented).
 * @param {Uint8Array} bytes
 * @param {{ width: number, height: number }} info from jpegInfo (its limits already checked by the caller)
 */
export function decodeJpeg(bytes, info) {
  // Every 8×8 block of a full-resolution component costs at least one bit (its DC code) in the scan that covers it:
  // a file shorter than that is cut off, and refusing it here keeps a few corrupt header bytes from allocating the
  // coefficients of a huge frame.
  if (bytes.length * 8 < Math.ceil(info.width / 8) * Math.ceil(info.height / 8)) {
    throw fail(`the file (${bytes.length} bytes) is too short for a ${info.width}x${info.height} frame (truncated or corrupt)`);
  }
  const { frame, quant, adobe, jfif } = readAll(bytes);
  const { width, height } = frame;
  const planes = frame.components.map((c) => {
    const q = quant[c.tq];
    if (!q) throw fail('a component uses a quantisation table that was never defined');
    return upsample(componentPlane(c, q), frame.maxH / c.h, frame.maxV / c.v, width, height);
  });
  const transform = colourTransform(frame, adobe, jfif);
  return { data: toRgba(planes, width * height, transform, Boolean(adobe)), width, height };
}

// Image inputs of the image pipelines ('image-to-text', 'visual-question-answering'): anything a caller has → checked
// RGBA/RGB/grey pixels { data, width, height, channels } for the engine. Not a task itself.
//
// Raw pixels (ImageData, { data, width, height, channels? }) are checked as they are, everywhere. Encoded images:
//   in Node: a file path, a file: URL (URL object or string), an http(s): or data: URL (fetch), or the file's bytes
//     (Buffer, Uint8Array, ArrayBuffer, SharedArrayBuffer, Blob); the format is sniffed from the first bytes, never
//     from a name: PNG (png.js, over node:zlib's inflate) and JPEG (jpeg.js, jpeg-scan.js, jpeg-pixels.js: libjpeg's
//     arithmetic, so Pillow's and browsers' pixels), EXIF orientation applied (orientation.js). node:fs and node:zlib
//     are imported only on this path, with variable specifiers, so browser bundles never pull them in.
//   in browsers: the same bytes and URLs, plus image elements, ImageBitmaps, canvases and Blobs, decoded by
//     createImageBitmap (imageOrientation: 'from-image': EXIF orientation applied) and read back from a canvas.
// Limits: an encoded image above MAX_ENCODED_SIDE pixels a side is refused from its header, before any pixel memory
// is allocated; raw pixels may have up to MAX_SIDE a side. Every error names the pipeline that was called
// ("attnlens: image-to-text: …"); a wrong JS type is a TypeError, bad sizes are RangeErrors, a file that cannot be
// read or decoded is an Error, and the pipeline keeps working afterwards.
import { checkBytes } from './input.js';
import { isPng, pngSize, decodePng } from './png.js';
import { isJpeg, jpegInfo, decodeJpeg } from './jpeg.js';
import { orient, tiffOrientation } from './orientation.js';

export const MAX_SIDE = 65536;
export const MAX_ENCODED_SIDE = 16384;
const MAX_BROWSER_PIXELS = 16777216;

const isPixelArray = (d) => d instanceof Uint8ClampedArray || d instanceof Uint8Array;
const isNode = () => typeof process === 'object' && typeof process?.versions?.node === 'string';
const isBytes = (x) => x instanceof ArrayBuffer || ArrayBuffer.isView(x) ||
  (typeof SharedArrayBuffer === 'function' && x instanceof SharedArrayBuffer);
const isBlob = (x) => typeof Blob === 'function' && x instanceof Blob;

function describe(input) {
  if (input === null) return 'null';
  if (typeof input !== 'object') return typeof input;
  return input.constructor?.name ?? 'object';
}

/**
 * Any accepted image input → { data, width, height, channels }, checked. `task` names the pipeline in errors.
 * @param {unknown} input
 * @param {string} task
 */
export async function toPixels(input, task) {
  if (input !== null && typeof input === 'object' && 'data' in input && 'width' in input && !isBytes(input)) {
    if (!isPixelArray(input.data)) {
      throw new TypeError(`attnlens: ${task}: image data must be a Uint8ClampedArray or Uint8Array of RGBA bytes, ` +
        `got ${describe(input.data)}`);
    }
    return checkPixels(input, task); // ImageData or { data, width, height, channels? }
  }
  const encoded = typeof input === 'string' || input instanceof URL || isBytes(input) || isBlob(input);
  if (typeof createImageBitmap === 'function' && (encoded || (input !== null && typeof input === 'object'))) {
    return decodeInBrowser(input, task);
  }
  if (encoded && isNode()) return decodeInNode(input, task);
  if (encoded) {
    throw new TypeError(`attnlens: ${task}: decoding images needs Node or a browser (createImageBitmap); pass ` +
      `{ data, width, height } with RGBA bytes (got ${describe(input)})`);
  }
  throw new TypeError(`attnlens: ${task}: the image must be a file path, a URL, the bytes of a PNG or JPEG file, ` +
    `ImageData or { data, width, height }${typeof createImageBitmap === 'function' ? ', an image element or a Blob' : ''}, ` +
    `got ${describe(input)}`);
}

/**
 * { data, width, height, channels? } (or ImageData) → checked pixels: wrong types are TypeErrors, bad sizes and byte
 * counts RangeErrors, all before WebAssembly is called. Detached buffers are refused; SharedArrayBuffer-backed pixels
 * are read in place (only the rows the resize needs are copied into WebAssembly).
 */
export function checkPixels(input, task) {
  const { width, height } = input;
  const channels = input.channels ?? 4;
  for (const [name, v] of [['width', width], ['height', height]]) {
    if (typeof v !== 'number') throw new TypeError(`attnlens: ${task}: image ${name} must be a number, got ${typeof v}`);
    if (!Number.isInteger(v) || v < 0) {
      throw new RangeError(`attnlens: ${task}: image width and height must be non-negative integers, got ${String(width)}x${String(height)}`);
    }
    if (v > MAX_SIDE) {
      throw new RangeError(`attnlens: ${task}: the image is too large: ${String(width)}x${String(height)}; each side must be at most ${MAX_SIDE} pixels`);
    }
  }
  if (typeof channels !== 'number') throw new TypeError(`attnlens: ${task}: image channels must be a number, got ${typeof channels}`);
  if (![1, 3, 4].includes(channels)) {
    throw new RangeError(`attnlens: ${task}: image channels must be 4 (RGBA), 3 (RGB) or 1 (grey), got ${String(channels)}`);
  }
  const data = checkBytes(input.data, `${task}: the image data`, { copyShared: false });
  if (width === 0 || height === 0) throw new RangeError(`attnlens: ${task}: the image is empty (${width}x${height} pixels)`);
  const need = width * height * channels;
  if (data.length !== need) {
    throw new RangeError(`attnlens: ${task}: the image data has ${data.length} bytes; a ${width}x${height} image with ` +
      `${channels} channel${channels > 1 ? 's' : ''} needs exactly ${need}`);
  }
  return { data, width, height, channels };
}

// ---- Node ----------------------------------------------------------------------------------------------------------

// A variable specifier keeps bundlers from pulling Node-only modules into a browser build.
const nodeImport = (name) => import(/* @vite-ignore */ /* webpackIgnore: true */ name);

async function decodeInNode(input, task) {
  const { bytes, where } = await readSource(input, task);
  return decodeBytes(bytes, task, where);
}

const DETACHED = 'a view of a detached ArrayBuffer (it was transferred, e.g. with postMessage or structuredClone); ' +
  'pass a copy that this thread still owns';

// A Uint8Array over the bytes of an ArrayBuffer, SharedArrayBuffer or ArrayBufferView (shared ones copied); a
// detached buffer is a TypeError.
function byteView(input, task) {
  let view;
  try {
    view = ArrayBuffer.isView(input) ? new Uint8Array(input.buffer, input.byteOffset, input.byteLength) : new Uint8Array(input);
  } catch {
    throw new TypeError(`attnlens: ${task}: the image bytes is ${DETACHED}`);
  }
  return checkBytes(view, `${task}: the image bytes`);
}

// { bytes: Uint8Array, where: a name for errors } of a path, URL, byte array or Blob.
async function readSource(input, task) {
  if (isBytes(input)) return { bytes: byteView(input, task), where: 'the image bytes' };
  if (isBlob(input)) return { bytes: new Uint8Array(await input.arrayBuffer()), where: 'the image Blob' };
  const text = String(input instanceof URL ? input.href : input);
  // A scheme of two or more letters makes a URL; anything else (including C:\…) is a path.
  const url = input instanceof URL ? input : /^[a-z][a-z0-9+.-]+:/i.test(text) ? parseUrl(text, task) : null;
  if (!url) return { bytes: await readPath(text, task), where: text };
  if (url.protocol === 'file:') {
    const { fileURLToPath } = await nodeImport('node:url');
    let file;
    try {
      file = fileURLToPath(url);
    } catch (err) {
      throw new Error(`attnlens: ${task}: ${url.href} is not a usable file: URL (${err.message})`);
    }
    return { bytes: await readPath(file, task), where: url.href };
  }
  if (['http:', 'https:', 'data:'].includes(url.protocol)) return { bytes: await fetchBytes(url, task), where: shortUrl(url) };
  throw new Error(`attnlens: ${task}: unsupported URL scheme ${url.protocol} in ${shortUrl(url)} (file:, http:, https: ` +
    'and data: URLs are read)');
}

const shortUrl = (url) => (url.href.length > 120 ? `${url.href.slice(0, 117)}...` : url.href);

function parseUrl(text, task) {
  try {
    return new URL(text);
  } catch {
    throw new Error(`attnlens: ${task}: ${text.slice(0, 120)} is not a valid URL`);
  }
}

async function readPath(file, task) {
  const { readFile } = await nodeImport('node:fs/promises');
  try {
    const b = await readFile(file);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  } catch (err) {
    const why = { ENOENT: 'no such file', EISDIR: 'it is a folder', EACCES: 'permission denied' }[err?.code] ?? err?.message;
    throw new Error(`attnlens: ${task}: cannot read the image file ${file} (${why})`);
  }
}

async function fetchBytes(url, task) {
  let response;
  try {
    response = await fetch(url.href);
  } catch (err) {
    throw new Error(`attnlens: ${task}: fetching the image ${shortUrl(url)} failed (${err?.cause?.code ?? err?.message ?? err})`);
  }
  if (!response.ok) throw new Error(`attnlens: ${task}: fetching the image ${shortUrl(url)} failed with HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * Encoded image bytes → upright RGBA pixels { data, width, height, channels: 4 } (Node: png.js needs node:zlib).
 * `where` names the source in errors.
 * @param {Uint8Array} bytes
 */
export async function decodeBytes(bytes, task, where = 'the image') {
  const format = isPng(bytes) ? 'PNG' : isJpeg(bytes) ? 'JPEG' : null;
  if (!format) throw new Error(`attnlens: ${task}: ${where} is not a PNG or JPEG file (${sniff(bytes)})`);
  let px;
  try {
    if (format === 'PNG') {
      limitSize(pngSize(bytes), task, where);
      const { inflateSync } = await nodeImport('node:zlib');
      px = decodePng(bytes, (deflated, max) => inflateSync(deflated, { maxOutputLength: Math.max(1, max) }));
      return upright(px, px.exif ? tiffOrientation(px.exif) : 1);
    }
    const info = jpegInfo(bytes);
    limitSize(info, task, where);
    return upright(decodeJpeg(bytes, info), info.orientation);
  } catch (err) {
    if (err instanceof RangeError && String(err.message).startsWith('attnlens:')) throw err;
    throw new Error(`attnlens: ${task}: cannot decode ${where}: ${err?.message ?? err}`);
  }
}

function limitSize({ width, height }, task, where) {
  if (width > MAX_ENCODED_SIDE || height > MAX_ENCODED_SIDE) {
    throw new RangeError(`attnlens: ${task}: ${where} is too large: ${width}x${height} pixels; each side of an ` +
      `encoded image must be at most ${MAX_ENCODED_SIDE}`);
  }
}

const upright = (px, orientation) => ({ ...orient(px, orientation), channels: 4 });

// What the first bytes look like, for the error of an unsupported format.
function sniff(bytes) {
  const ascii = (n, from = 0) => String.fromCharCode(...bytes.subarray(from, from + n));
  if (bytes.length === 0) return 'it is empty';
  if (ascii(4) === 'GIF8') return 'it is a GIF; PNG and JPEG are decoded in Node';
  if (ascii(4) === 'RIFF' && ascii(4, 8) === 'WEBP') return 'it is a WebP; PNG and JPEG are decoded in Node';
  if (ascii(2) === 'BM') return 'it is a BMP; PNG and JPEG are decoded in Node';
  if (ascii(4, 4) === 'ftyp') return 'it is HEIF/AVIF; PNG and JPEG are decoded in Node';
  if (ascii(4) === 'II*\0' || ascii(4) === 'MM\0*') return 'it is a TIFF; PNG and JPEG are decoded in Node';
  return 'unknown format: PNG and JPEG are decoded in Node';
}

// ---- browsers ------------------------------------------------------------------------------------------------------

// Browser image sources → { data, width, height } through createImageBitmap + OffscreenCanvas (or a <canvas>).
async function decodeInBrowser(input, task) {
  const source = await browserSource(input, task);
  let bitmap;
  try {
    bitmap = await createImageBitmap(source, { imageOrientation: 'from-image', premultiplyAlpha: 'none',
      colorSpaceConversion: 'none' });
  } catch (err) {
    throw new Error(`attnlens: ${task}: the image could not be decoded (${err?.message ?? err})`);
  }
  try {
    return readBitmap(bitmap, task);
  } finally {
    bitmap.close?.();
  }
}

// What createImageBitmap takes: URLs fetched into Blobs, bytes wrapped in a Blob, elements decoded first.
async function browserSource(input, task) {
  if (isBytes(input)) return new Blob([new Uint8Array(byteView(input, task))]);
  if (typeof input === 'string' || input instanceof URL) {
    const base = typeof location === 'object' && location !== null && location.href ? location.href : undefined;
    let url;
    try {
      url = new URL(String(input), base);
    } catch {
      throw new Error(`attnlens: ${task}: ${String(input).slice(0, 120)} is not a valid URL`);
    }
    return new Blob([await fetchBytes(url, task)]);
  }
  if (typeof HTMLImageElement !== 'undefined' && input instanceof HTMLImageElement &&
      (!input.complete || input.naturalWidth === 0)) {
    try {
      await input.decode();
    } catch (err) {
      throw new Error(`attnlens: ${task}: the image element could not be decoded (${err?.message ?? err}); is its src valid?`);
    }
  }
  return input;
}



function readBitmap(bitmap, task) {
  let { width, height } = bitmap;
  if (width === 0 || height === 0) throw new Error(`attnlens: ${task}: the image is empty (0 pixels)`);
  if (width * height > MAX_BROWSER_PIXELS) {
    const s = Math.sqrt(MAX_BROWSER_PIXELS / (width * height));
    width = Math.max(1, Math.floor(width * s));
    height = Math.max(1, Math.floor(height * s));
  }
  let canvas;
  if (typeof OffscreenCanvas === 'function') {
    canvas = new OffscreenCanvas(width, height);
  } else {
    canvas = document.createElement('canvas');
    canvas.width = width;
    canvas.height = height;
  }
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  if (!ctx) throw new Error(`attnlens: ${task}: no 2D canvas context to read the image pixels`);
  ctx.drawImage(bitmap, 0, 0, width, height);
  const img = ctx.getImageData(0, 0, width, height);
  return { data: img.data, width: img.width, height: img.height, channels: 4 };
}

// JPEG for the Node image path (wasm/pipelines/image.js): the header read here (size, coding, EXIF orientation, all
// bounds-checked, before anything is allocated), the entropy decoding by the jpeg-js package (pure JS, baseline and
// progressive Huffman JPEG; docs/USING.md says why), handed in by the caller so that this module imports nothing.
// Errors are plain Errors whose message starts "JPEG:"; the caller adds the pipeline's name.
import { tiffOrientation } from './orientation.js';

const fail = (why) => new Error(`JPEG: ${why}`);
// Start-of-frame markers: C0 baseline, C1 extended, C2 progressive (Huffman, which jpeg-js decodes); the others are
// lossless, hierarchical or arithmetic-coded. C4 (DHT), C8 (JPG) and CC (DAC) are not frames.
const DECODED = new Set([0xc0, 0xc1, 0xc2]);
const isFrame = (m) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
// jpeg-js's own memory bound while decoding (its block arrays, the component planes and the RGBA output).
const MAX_DECODER_MB = 2048;

/** True when bytes start with a JPEG start-of-image marker. */
export const isJpeg = (bytes) => bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;

const EXIF = [0x45, 0x78, 0x69, 0x66, 0, 0]; // "Exif\0\0"

/**
 * The frame header: { width, height, orientation (EXIF, 1–8), progressive }. Throws for a truncated or corrupt
 * header, and for JPEG codings jpeg-js does not decode (arithmetic, lossless, hierarchical, 12-bit).
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

/**
 * JPEG bytes → { data: RGBA Uint8Array, width, height } through jpeg-js's decode(bytes, options).
 * @param {Uint8Array} bytes
 * @param {{ width: number, height: number }} info from jpegInfo
 * @param {Function} decode jpeg-js's lib/decoder.js export
 */
export function decodeJpeg(bytes, info, decode) {
  // Every 8×8 block of a full-resolution component costs at least one bit (its DC code) in the scan that covers it:
  // a file shorter than that is cut off, and refusing it here keeps a few corrupt header bytes from making jpeg-js
  // allocate the block arrays of a huge frame.
  const blocks = Math.ceil(info.width / 8) * Math.ceil(info.height / 8);
  if (bytes.length * 8 < blocks) {
    throw fail(`the file (${bytes.length} bytes) is too short for a ${info.width}x${info.height} frame (truncated or corrupt)`);
  }
  let image;
  try {
    image = decode(bytes, {
      useTArray: true, formatAsRGBA: true, tolerantDecoding: true,
      maxResolutionInMP: Math.ceil((info.width * info.height) / 1e6) + 1, maxMemoryUsageInMB: MAX_DECODER_MB,
    });
  } catch (err) {
    const why = String(err?.message ?? err);
    if (/maxMemoryUsageInMB/.test(why)) throw fail(`decoding it would take more than ${MAX_DECODER_MB} MB of memory`);
    throw fail(`the image data is corrupt or truncated (${why})`);
  }
  if (!image || image.width !== info.width || image.height !== info.height ||
      !(image.data instanceof Uint8Array) || image.data.length !== info.width * info.height * 4) {
    throw fail('the decoder returned no image of the header\'s size (corrupt file)');
  }
  return { data: image.data, width: image.width, height: image.height };
}

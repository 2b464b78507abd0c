// safetensors, read and written in JavaScript (the converter, the scripts and the package tests): an 8-byte
// little-endian header length, a JSON header { name: { dtype, shape, data_offsets }, __metadata__ }, then the raw
// little-endian tensor bytes. parseSafetensors checks everything it reads (lengths, dtypes, shapes against byte
// counts, offsets inside the data and not overlapping) and names the file in every error, so a truncated or corrupt
// file never reads out of bounds.
import { ConvertError } from './errors.js';

export const DTYPE_SIZES = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U64: 8, U32: 4, U16: 2, U8: 1, BOOL: 1 };
export const FLOAT_DTYPES = ['F32', 'F16', 'BF16'];
const MAX_HEADER = 100 * 1024 * 1024;

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The number of values of a shape (an array of non-negative safe integers), or -1 when it is not one. */
export function shapeSize(shape) {
  if (!Array.isArray(shape)) return -1;
  let n = 1;
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) return -1;
    n *= d;
    if (!Number.isSafeInteger(n)) return -1;
  }
  return n;
}

/** { header (without __metadata__), metadata, data: the Uint8Array of the tensor bytes } of a safetensors file.
 * `where` names the file in errors. */
export function parseSafetensors(bytes, where = 'safetensors file') {
  if (!(bytes instanceof Uint8Array)) throw new ConvertError(`${where}: expected bytes`);
  if (bytes.length < 8) throw new ConvertError(`${where}: ${bytes.length} bytes, too short for a safetensors file (truncated?)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n64 = view.getBigUint64(0, true);
  if (n64 > BigInt(Math.min(MAX_HEADER, bytes.length - 8))) {
    throw new ConvertError(`${where}: the header length ${n64} runs past the file's ${bytes.length} bytes (truncated or not safetensors)`);
  }
  const n = Number(n64);
  let header;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch (err) {
    throw new ConvertError(`${where}: the header is not valid UTF-8 JSON (${err.message})`);
  }
  if (!isObject(header)) throw new ConvertError(`${where}: the header must be a JSON object`);
  const metadata = header.__metadata__ ?? {};
  delete header.__metadata__;
  if (!isObject(metadata) || Object.values(metadata).some((v) => typeof v !== 'string')) {
    throw new ConvertError(`${where}: __metadata__ must be an object of strings`);
  }
  const data = bytes.subarray(8 + n);
  const spans = [];
  for (const [name, entry] of Object.entries(header)) {
    const at = `${where}: tensor ${JSON.stringify(name)}`;
    if (!isObject(entry)) throw new ConvertError(`${at} must be an object {dtype, shape, data_offsets}`);
    const size = Object.hasOwn(DTYPE_SIZES, entry.dtype) && DTYPE_SIZES[entry.dtype];
    if (!size) throw new ConvertError(`${at} has dtype ${JSON.stringify(entry.dtype)}; known: ${Object.keys(DTYPE_SIZES).join(', ')}`);
    const count = shapeSize(entry.shape);
    if (count < 0) throw new ConvertError(`${at} has shape ${JSON.stringify(entry.shape)}; expected an array of non-negative integers`);
    const off = entry.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !off.every((x) => Number.isSafeInteger(x) && x >= 0) || off[0] > off[1]) {
      throw new ConvertError(`${at} has data_offsets ${JSON.stringify(off)}; expected [begin, end] with 0 <= begin <= end`);
    }
    if (off[1] > data.length) {
      throw new ConvertError(`${at} ends at byte ${off[1]} of the data, which has ${data.length} bytes (truncated?)`);
    }
    if (off[1] - off[0] !== count * size) {
      throw new ConvertError(`${at} has ${off[1] - off[0]} bytes, its shape [${entry.shape}] of ${entry.dtype} needs ${count * size}`);
    }
    spans.push([off[0], off[1], name]);
  }
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  for (let i = 1; i < spans.length; i++) {
    if (spans[i][0] < spans[i - 1][1]) {
      throw new ConvertError(`${where}: tensors ${JSON.stringify(spans[i - 1][2])} and ${JSON.stringify(spans[i][2])} overlap`);
    }
  }
  return { header, metadata, data };
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/** A float tensor's values (F32, F16, BF16) as a Float32Array. */
export function floatValues(entry, data) {
  const [b, e] = entry.data_offsets;
  const dv = new DataView(data.slice(b, e).buffer); // a copy: aligned
  const count = (e - b) / DTYPE_SIZES[entry.dtype];
  const out = new Float32Array(count);
  const bits = new Uint32Array(1);
  const asFloat = new Float32Array(bits.buffer);
  for (let i = 0; i < count; i++) {
    if (entry.dtype === 'F32') out[i] = dv.getFloat32(4 * i, true);
    else if (entry.dtype === 'F16') out[i] = halfToFloat(dv.getUint16(2 * i, true));
    else if (entry.dtype === 'BF16') {
      bits[0] = dv.getUint16(2 * i, true) << 16;
      out[i] = asFloat[0];
    } else throw new Error(`not a float tensor: ${entry.dtype}`);
  }
  return out;
}

/** Safetensors bytes from [name, dtype, shape, Uint8Array] entries and metadata (header padded to 8 bytes). */
export function writeSafetensors(entries, metadata) {
  const header = {};
  let offset = 0;
  for (const [name, dtype, shape, bytes] of entries) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
  }
  if (metadata && Object.keys(metadata).length) header.__metadata__ = metadata;
  let head = new TextEncoder().encode(JSON.stringify(header));
  const pad = (8 - (head.length % 8)) % 8;
  if (pad) head = new TextEncoder().encode(JSON.stringify(header) + ' '.repeat(pad));
  const out = new Uint8Array(8 + head.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  let pos = 8 + head.length;
  for (const [, , , bytes] of entries) {
    out.set(bytes, pos);
    pos += bytes.length;
  }
  return out;
}

// safetensors in JavaScript, for the scripts and the package tests: 8-byte little-endian header length, a JSON
// header { name: { dtype, shape, data_offsets }, __metadata__ }, then the raw little-endian tensor bytes.
export const DTYPE_SIZES = { F32: 4, F16: 2, BF16: 2, I32: 4, I64: 8, I8: 1, U8: 1 };

/** { header (without __metadata__), metadata, data: the Uint8Array of the tensor bytes } of a safetensors file. */
export function parseSafetensors(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const metadata = header.__metadata__ ?? {};
  delete header.__metadata__;
  return { header, metadata, data: bytes.subarray(8 + n) };
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
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const head = Buffer.from(json, 'utf8');
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

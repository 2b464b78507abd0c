// Binary PPM (P6, 8-bit RGB, optional # comments in the header) → { data, width, height, channels: 3 }, the pixel
// object the image pipelines take. Used by bench/previous.mjs and scripts/caption-int8-alpha.mjs.
import { readFileSync } from 'node:fs';

export function readPpm(file) {
  const b = readFileSync(file);
  let i = 0;
  const fields = [];
  while (fields.length < 4) {
    if (i >= b.length) throw new Error(`${file}: truncated PPM header`);
    while (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09) i++;
    if (b[i] === 0x23) { while (i < b.length && b[i] !== 0x0a) i++; continue; }
    let s = '';
    while (i < b.length && b[i] !== 0x20 && b[i] !== 0x0a && b[i] !== 0x0d && b[i] !== 0x09) s += String.fromCharCode(b[i++]);
    fields.push(s);
  }
  const [magic, w, h, max] = fields;
  const [width, height] = [Number(w), Number(h)];
  if (magic !== 'P6' || Number(max) !== 255 || !(width > 0) || !(height > 0)) throw new Error(`${file}: not an 8-bit binary PPM`);
  const data = new Uint8Array(b.subarray(i + 1, i + 1 + width * height * 3));
  if (data.length !== width * height * 3) throw new Error(`${file}: ${data.length} pixel bytes, ${width * height * 3} expected`);
  return { data, width, height, channels: 3 };
}

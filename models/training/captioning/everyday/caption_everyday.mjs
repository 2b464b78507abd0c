#!/usr/bin/env node
// Captions every photo of photos/ through the npm package's pipeline (WASM), with the bundle's default decoding,
// and writes one JSON line per photo: { image, caption }. Photos are decoded to RGB pixels by Pillow (a small
// /usr/bin/python3 step; the package takes raw pixels in Node), EXIF orientation applied.
//
//   node scripts/quantize.mjs models/flickr8k-mobilenet /tmp/int8/flickr8k-mobilenet
//   node scripts/quantize.mjs models/flickr8k-mobilenet-encoder /tmp/int8/flickr8k-mobilenet-encoder
//   node models/training/captioning/everyday/caption_everyday.mjs [BUNDLE] [OUT.jsonl] [PACKAGE_INDEX_JS]
//
// BUNDLE: a captioning bundle folder (its encoder in the sibling folder); default /tmp/int8/flickr8k-mobilenet, the
// int8 bundle the npm package ships. OUT: default /tmp/everyday-captions.jsonl. PACKAGE_INDEX_JS: default the
// repository's wasm/index.js.
import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..', '..', '..');
const [bundle = '/tmp/int8/flickr8k-mobilenet', out = '/tmp/everyday-captions.jsonl',
  indexJs = path.join(ROOT, 'wasm', 'index.js')] = process.argv.slice(2);
const { pipeline } = await import(path.resolve(indexJs));

const DECODE = `
import sys
from PIL import Image, ImageOps
im = ImageOps.exif_transpose(Image.open(sys.argv[1])).convert('RGB')
sys.stdout.buffer.write(b'%d %d\\n' % im.size + im.tobytes())
`;

function decode(file) {
  const b = execFileSync('/usr/bin/python3', ['-c', DECODE, file], { maxBuffer: 1 << 26 });
  const nl = b.indexOf(0x0a);
  const [width, height] = b.subarray(0, nl).toString().split(' ').map(Number);
  const data = new Uint8Array(b.subarray(nl + 1));
  if (data.length !== width * height * 3) throw new Error(`${file}: ${data.length} pixel bytes, ${width * height * 3} expected`);
  return { data, width, height, channels: 3 };
}

const dir = path.join(HERE, 'photos');
const files = readdirSync(dir).filter((f) => /\.(jpe?g|png)$/i.test(f)).sort();
const captioner = await pipeline('image-to-text', path.resolve(bundle));
const lines = [];
try {
  for (const f of files) {
    const { text } = await captioner(decode(path.join(dir, f)));
    lines.push(JSON.stringify({ image: f, caption: text }));
    console.log(`${f}\t${text}`);
  }
} finally {
  captioner.dispose();
}
writeFileSync(out, lines.join('\n') + '\n');
console.log(`${files.length} photos captioned by ${bundle} -> ${out}`);

// Images as people have them (wasm/pipelines/image.js, png.js, jpeg.js, jpeg-scan.js, jpeg-pixels.js, orientation.js):
// every fixture of tests/fixtures/images/ (written by its make.py with Pillow) decodes in Node to exactly the pixels
// Pillow decodes; the eight EXIF orientations come out upright; every input form (path, file: URL object and string,
// http: URL from a local server, data: URL, Buffer, Uint8Array, ArrayBuffer, DataView, SharedArrayBuffer, Blob, raw
// pixels) gives the same caption; broken, huge and unsupported files and bad paths/URLs are clear Errors naming the
// pipeline, and the pipeline keeps working; real photo files give the captions their Pillow pixels gave
// (photo-captions.json); and in Chromium an EXIF-rotated JPEG is read upright.
import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { pipeline } from '../../wasm/index.js';
import { tinyCaptioner } from './helpers.mjs';
import { decodeBytes } from '../../wasm/pipelines/image.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIX = `${ROOT}tests/fixtures/images/`;
const read = (name) => new Uint8Array(readFileSync(FIX + name));

// Pillow's RGBA is next to each fixture; both decoders give it exactly (the JPEG one computes as libjpeg does).
const FORMATS = ['rgb.png', 'rgba.png', 'grey.png', 'grey-alpha.png', 'bilevel.png', 'palette.png', 'palette-8bit.png',
  'rgba16.png', 'grey16.png', 'interlaced.png', 'interlaced-small.png', 'orient-6.png', 'baseline.jpg', 'progressive.jpg',
  'baseline-444.jpg', 'grey.jpg', 'cmyk.jpg', ...[1, 2, 3, 4, 5, 6, 7, 8].map((o) => `orient-${o}.jpg`)];

function diff(a, b) {
  let max = 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (d > max) max = d;
    sum += d;
  }
  return { max, mean: sum / a.length };
}

test('every PNG and JPEG fixture decodes to exactly the pixels Pillow decodes', async () => {
  for (const file of FORMATS) {
    const px = await decodeBytes(read(file), 'image-to-text', file);
    const ref = read(`${file}.rgba`);
    assert.equal(px.channels, 4, file);
    assert.equal(px.width * px.height * 4, ref.length, `${file}: ${px.width}x${px.height}`);
    const { max } = diff(px.data, ref);
    assert.equal(max, 0, `${file}: differs from Pillow by up to ${max}`);
  }
});

test('EXIF orientation 1–8 (JPEG APP1, PNG eXIf): the picture comes out upright', async () => {
  const up = read('upright.rgba'); // 48×32: red | green over blue | white, a black square near the top left
  const at = (px, x, y) => Array.from(px.data.subarray(4 * (y * px.width + x), 4 * (y * px.width + x) + 3));
  const near = (a, b) => a.every((v, i) => Math.abs(v - b[i]) <= 40);
  for (const file of [1, 2, 3, 4, 5, 6, 7, 8].map((o) => `orient-${o}.jpg`).concat('orient-6.png')) {
    const px = await decodeBytes(read(file), 'image-to-text', file);
    assert.deepEqual([px.width, px.height], [48, 32], `${file}: size`);
    assert.ok(diff(px.data, up).mean < 4, `${file}: mean difference ${diff(px.data, up).mean}`);
    for (const [x, y, rgb] of [[8, 8, [0, 0, 0]], [18, 4, [220, 30, 30]], [40, 4, [30, 200, 40]],
      [4, 28, [30, 40, 210]], [44, 28, [240, 240, 240]]]) {
      assert.ok(near(at(px, x, y), rgb), `${file}: pixel (${x}, ${y}) is ${at(px, x, y)}, expected ${rgb}`);
    }
  }
});


// A local HTTP server for the fixtures: /images/NAME (200), anything else 404.
async function fixtureServer() {
  const server = createServer((req, res) => {
    const name = decodeURIComponent(req.url.replace(/^\/images\//, ''));
    if (!req.url.startsWith('/images/') || name.includes('/') || !existsSync(FIX + name)) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(readFileSync(FIX + name));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${server.address().port}/images/` };
}

test('image-to-text: path, URLs, bytes, Blob and raw pixels give the same caption', async () => {
  const caption = await tinyCaptioner();
  const { server, base } = await fixtureServer();
  try {
    const opts = { num_beams: 1, max_new_tokens: 6 };
    const pack = (r) => ({ text: r.text, att: Array.from(r.attentions.at(0).data) });
    for (const file of ['baseline.jpg', 'interlaced.png', 'orient-6.jpg']) {
      const bytes = readFileSync(FIX + file);
      const ref = pack(await caption(await decodeBytes(new Uint8Array(bytes), 'image-to-text'), opts));
      const forms = {
        path: FIX + file, relativePath: `tests/fixtures/images/${file}`, fileUrl: pathToFileURL(FIX + file),
        fileUrlString: pathToFileURL(FIX + file).href, http: `${base}${file}`, httpUrl: new URL(`${base}${file}`),
        dataUrl: `data:application/octet-stream;base64,${bytes.toString('base64')}`, buffer: bytes,
        uint8Array: new Uint8Array(bytes), arrayBuffer: new Uint8Array(bytes).buffer, blob: new Blob([bytes]),
        dataView: new DataView(new Uint8Array(bytes).buffer), sharedArrayBuffer: shared(bytes),
      };
      for (const [form, input] of Object.entries(forms)) {
        const cwd = process.cwd();
        if (form === 'relativePath') process.chdir(ROOT);
        try {
          assert.deepEqual(pack(await caption(input, opts)), ref, `${file} as ${form}`);
        } finally {
          process.chdir(cwd);
        }
      }
    }
    // an array mixing forms
    const many = await caption([FIX + 'rgb.png', read('rgb.png')], opts);
    assert.equal(many[0].text, many[1].text);
  } finally {
    server.close();
    caption.dispose();
  }
});

function shared(bytes) {
  const b = new SharedArrayBuffer(bytes.length);
  new Uint8Array(b).set(bytes);
  return b;
}

function detached(bytes) {
  const copy = new Uint8Array(bytes);
  structuredClone(copy.buffer, { transfer: [copy.buffer] });
  return copy;
}

// [input, error class, message pattern] of the bad inputs; base is the local server's /images/ URL.
const badInputs = (base) => [
  ['truncated.jpg', Error, /cannot decode .*truncated\.jpg: JPEG: the file is truncated/],
  ['truncated-progressive.jpg', Error, /JPEG: the file is truncated/],
  ['truncated-scan.jpg', Error, /JPEG: the file is truncated \(it ends inside the image data\)/],
  ['bad-huffman.jpg', Error, /JPEG: corrupt Huffman table/],
  ['truncated.png', Error, /PNG: .*truncated/],
  ['header-only.png', Error, /PNG: the file is truncated/],
  ['bad-crc.png', Error, /PNG: bad CRC in the IDAT chunk/],
  ['huge.jpg', RangeError, /300x20000 pixels; each side of an encoded image must be at most 16384/],
  ['huge.png', RangeError, /300x20000 pixels; each side of an encoded image must be at most 16384/],
  ['picture.gif', Error, /not a PNG or JPEG file \(it is a GIF/],
  ['picture.webp', Error, /not a PNG or JPEG file \(it is a WebP/],
  ['picture.bmp', Error, /not a PNG or JPEG file \(it is a BMP/],
  ['not-an-image.txt', Error, /not a PNG or JPEG file \(unknown format/],
].map(([f, E, re]) => [FIX + f, E, re]).concat([
  [new Uint8Array(0), Error, /the image bytes is not a PNG or JPEG file \(it is empty\)/],
  [read('truncated.png'), Error, /cannot decode the image bytes: PNG/],
  [`${FIX}no-such-file.jpg`, Error, /cannot read the image file .*no-such-file\.jpg \(no such file\)/],
  [FIX, Error, /cannot read the image file .*\(it is a folder\)/],
  [`${base}no-such.png`, Error, /fetching the image .*no-such\.png failed with HTTP 404/],
  ['http://127.0.0.1:1/x.png', Error, /fetching the image http:\/\/127\.0\.0\.1:1\/x\.png failed/],
  ['ftp://example.com/dog.jpg', Error, /unsupported URL scheme ftp:/],
  ['http://exa mple.com/x.png', Error, /is not a valid URL/],
  [detached(read('rgb.png')), TypeError, /the image bytes is a view of a detached ArrayBuffer/],
  [detached(read('rgb.png')).buffer, TypeError, /the image bytes is a view of a detached ArrayBuffer/],
  [42, TypeError, /the image must be a file path, a URL, the bytes of a PNG or JPEG file/],
  [null, TypeError, /got null/],
]);

for (const task of ['image-to-text', 'visual-question-answering']) {
  const model = task === 'image-to-text' ? null : 'shapes-vqa-coattn';
  const skip = model && !existsSync(`${ROOT}models/${model}/config.json`) ? `${model} is not in this checkout` : false;
  test(`${task}: broken, huge and unsupported files, bad paths and URLs are clear Errors; the pipeline keeps working`, { skip }, async () => {
    const run = model ? await pipeline(task, model) : await tinyCaptioner();
    const call = model ? (img) => run(img, 'what colour is the square ?') : (img) => run(img, { num_beams: 1, max_new_tokens: 3 });
    const { server, base } = await fixtureServer();
    try {
      const before = await call(FIX + 'rgb.png');
      for (const [input, Type, re] of badInputs(base)) {
        await assert.rejects(call(input), (err) => {
          const label = typeof input === 'string' ? input : Object.prototype.toString.call(input);
          assert.ok(err instanceof Type, `${label}: ${err.constructor.name} ${err.message}`);
          assert.ok(err.message.startsWith(`attnlens: ${task}: `), err.message);
          assert.match(err.message, re);
          return true;
        });
      }
      const after = await call(FIX + 'rgb.png');
      assert.deepEqual(after.logits ?? after.token_ids, before.logits ?? before.token_ids, 'the pipeline still works');
    } finally {
      server.close();
      run.dispose();
    }
  });
}

test('a real photo file gives the caption its Pillow-decoded pixels gave (flickr8k-mobilenet)', { timeout: 120_000 }, async (t) => {
  if (!existsSync(`${ROOT}models/flickr8k-mobilenet/config.json`)) {
    t.skip('flickr8k-mobilenet is not in this checkout');
    return;
  }
  const { photos } = JSON.parse(readFileSync(`${FIX}photo-captions.json`, 'utf8'));
  const caption = await pipeline('image-to-text', 'flickr8k-mobilenet', { model_base_url: `${ROOT}models/` });
  try {
    for (const name of ['skimage-chelsea.jpg', 'gnome-launch.jpg']) {
      const row = photos.find((p) => p.image === name);
      const out = await caption(`${ROOT}models/training/captioning/everyday/photos/${name}`);
      assert.equal(out.text, row.pillow, name);
    }
  } finally {
    caption.dispose();
  }
});

// In Chromium (the browser path: createImageBitmap with imageOrientation 'from-image'): an EXIF-rotated JPEG, as a
// blob: URL and as bytes, is read upright.
test('browsers: an EXIF-rotated JPEG (orientation 6) is read upright', { timeout: 120_000 }, async (t) => {
  const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (process.env.ATTNLENS_SKIP_BROWSER === '1' || !existsSync(CHROMIUM)) {
    t.skip(process.env.ATTNLENS_SKIP_BROWSER === '1' ? 'ATTNLENS_SKIP_BROWSER=1' : `${CHROMIUM} is missing`);
    return;
  }
  const { chromium } = await import('playwright-core');
  const { serve } = await import('../../scripts/serve.mjs');
  const { server, url } = await serve(ROOT.replace(/\/$/, ''), { port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage();
    await page.goto(url);
    const out = await page.evaluate(async (b64) => {
      const { toPixels } = await import('/wasm/pipelines/image.js');
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const fromUrl = await toPixels(URL.createObjectURL(new Blob([bytes], { type: 'image/jpeg' })), 'image-to-text');
      const fromBytes = await toPixels(bytes, 'image-to-text');
      const pack = (px) => ({ width: px.width, height: px.height, data: Array.from(px.data) });
      return [pack(fromUrl), pack(fromBytes)];
    }, readFileSync(`${FIX}orient-6.jpg`).toString('base64'));
    const up = read('upright.rgba');
    for (const px of out) {
      assert.deepEqual([px.width, px.height], [48, 32]);
      assert.ok(diff(px.data, up).mean < 4, `mean difference ${diff(px.data, up).mean}`);
    }
  } finally {
    await browser.close();
    server.close();
  }
});

// Verified model files (docs/DESIGN.md §5): every bundle's manifest.json (scripts/bundle-digests.mjs) matches its
// files, and the loader (wasm/models.js) checks each file against it before parsing: a flipped byte or a truncated
// file is refused with a message naming the model and the file, a bundle without a manifest loads with a one-time
// warning, and a cached copy that fails the check is deleted and fetched again (a fake Cache API over a node:http
// server, the code path browsers take).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadBundle, pipeline } from '../../wasm/index.js';
import { bundleFiles, shippedBundles, writeManifest } from '../../scripts/bundle-digests.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = path.join(ROOT, 'scripts', 'bundle-digests.mjs');
const MODEL = 'sst2-selfattn';
const SOURCE = path.join(ROOT, 'models', MODEL);
const TEXT = "it's a charming and often affecting journey";

const runScript = (...args) => spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8' });

/** A copy of the sst2-selfattn bundle (loader files + manifest) in a fresh temp folder; returns its path. */
function copyBundle(t) {
  const root = mkdtempSync(path.join(tmpdir(), 'attnlens-digests-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dir = path.join(root, MODEL);
  mkdirSync(dir);
  for (const f of [...bundleFiles(SOURCE), 'manifest.json']) copyFileSync(path.join(SOURCE, f), path.join(dir, f));
  return dir;
}

function flipLastByte(file) {
  const bytes = readFileSync(file);
  bytes[bytes.length - 1] ^= 0x01; // inside the last tensor's data: the bundle itself would still parse
  writeFileSync(file, bytes);
}

/** Serves `dir` over http://127.0.0.1; counts GETs per file name. */
async function serveFolder(t, dir) {
  const hits = {};
  const server = createServer((req, res) => {
    const file = decodeURIComponent(new URL(req.url, 'http://x').pathname.split('/').pop());
    hits[file] = (hits[file] ?? 0) + 1;
    let body;
    try {
      body = readFileSync(path.join(dir, file));
    } catch {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/octet-stream' }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${server.address().port}/${MODEL}/`, hits };
}

/** A Cache API stand-in (match / put / delete on URL strings), installed as globalThis.caches for the test. */
function fakeCaches(t) {
  const store = new Map();
  const deleted = [];
  const cache = {
    async match(url) {
      const bytes = store.get(String(url));
      return bytes ? new Response(bytes.slice(), { headers: { 'content-length': String(bytes.length) } }) : undefined;
    },
    async put(url, response) {
      store.set(String(url), new Uint8Array(await response.arrayBuffer()));
    },
    async delete(url) {
      deleted.push(String(url));
      return store.delete(String(url));
    },
  };
  const had = Object.getOwnPropertyDescriptor(globalThis, 'caches');
  globalThis.caches = { open: async () => cache };
  t.after(() => {
    if (had) Object.defineProperty(globalThis, 'caches', had);
    else delete globalThis.caches;
  });
  return { store, deleted };
}

test('every shipped bundle matches its manifest.json (scripts/bundle-digests.mjs --check)', () => {
  const r = runScript('--check');
  assert.equal(r.status, 0, `bundle-digests --check failed:\n${r.stdout}${r.stderr}`);
  for (const dir of shippedBundles()) {
    assert.match(r.stdout, new RegExp(`ok models/${path.basename(dir)}/manifest\\.json`));
  }
  assert.ok(shippedBundles().length >= 1, 'models/ holds bundles');
});

test('--check fails, naming the file, for a bundle changed without refreshing its manifest', (t) => {
  const dir = copyBundle(t);
  assert.equal(runScript('--check', dir).status, 0, 'the fresh copy matches');
  flipLastByte(path.join(dir, 'weights.safetensors'));
  const r = runScript('--check', dir);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /sst2-selfattn\/weights\.safetensors does not match sst2-selfattn\/manifest\.json \(sha256 [0-9a-f]{64}, expected [0-9a-f]{64}\)/);
  assert.doesNotMatch(r.stderr, /config\.json|vocab\.txt/);

  writeManifest(dir);
  assert.equal(runScript('--check', dir).status, 0, 'npm run digests refreshes it');
  unlinkSync(path.join(dir, 'manifest.json'));
  const missing = runScript('--check', dir);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /manifest\.json is missing/);
});

test('pipeline() refuses a bundle whose weights differ by one byte, naming the model and the file', async (t) => {
  const dir = copyBundle(t);
  const classify = await pipeline('sentiment-analysis', dir);
  classify.dispose(); // the untouched copy loads
  flipLastByte(path.join(dir, 'weights.safetensors'));
  await assert.rejects(pipeline('sentiment-analysis', dir),
    /^Error: attnlens: model sst2-selfattn: weights\.safetensors does not match its manifest \(sha256 [0-9a-f]{64}, expected [0-9a-f]{64}\)/);
});

test('a truncated weights file is reported as truncated, with its length and the expected one', async (t) => {
  const dir = copyBundle(t);
  const file = path.join(dir, 'weights.safetensors');
  const full = readFileSync(file);
  writeFileSync(file, full.subarray(0, 1000));
  await assert.rejects(pipeline('sentiment-analysis', dir),
    new RegExp(`attnlens: model sst2-selfattn: weights\\.safetensors is truncated: got 1000 of ${full.length} bytes`));
});

test('a bundle without manifest.json loads as before, with one console warning', async (t) => {
  const dir = copyBundle(t);
  unlinkSync(path.join(dir, 'manifest.json'));
  flipLastByte(path.join(dir, 'weights.safetensors')); // unchecked: nothing says what the bytes should be
  const warn = t.mock.method(console, 'warn', () => {});
  const classify = await pipeline('sentiment-analysis', dir);
  try {
    const out = await classify(TEXT);
    assert.match(out.label, /^(positive|negative)$/i);
    assert.ok(out.score > 0 && out.score <= 1, `score ${out.score}`);
  } finally {
    classify.dispose();
  }
  assert.equal(warn.mock.callCount(), 1);
  assert.match(String(warn.mock.calls[0].arguments[0]), /model sst2-selfattn has no manifest\.json: its files are loaded without a SHA-256 check/);
  (await pipeline('sentiment-analysis', dir)).dispose();
  assert.equal(warn.mock.callCount(), 1, 'the warning is given once per bundle');
});

test('a manifest that does not list a file the config names is refused', async (t) => {
  const dir = copyBundle(t);
  const manifestPath = path.join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  delete manifest.files['vocab.txt'];
  writeFileSync(manifestPath, JSON.stringify(manifest));
  await assert.rejects(loadBundle(dir), /model sst2-selfattn: vocab\.txt is not listed in its manifest\.json/);
});

test('a truncated copy in the Cache API is deleted and fetched again; a bad download still fails', async (t) => {
  const dir = copyBundle(t);
  const { url, hits } = await serveFolder(t, dir);
  const { store, deleted } = fakeCaches(t);
  const weightsUrl = `${url}weights.safetensors`;
  const full = new Uint8Array(readFileSync(path.join(dir, 'weights.safetensors')));

  // First load: everything from the server, every file put in the cache after its check.
  await loadBundle(url, { cache: true });
  assert.deepEqual(Object.keys(hits).sort(), ['config.json', 'manifest.json', 'vocab.txt', 'weights.safetensors']);
  assert.equal(store.get(weightsUrl).length, full.length);

  // A download cut off earlier left half of the weights in the cache.
  store.set(weightsUrl, full.slice(0, full.length >> 1));
  const before = { ...hits };
  const bundle = await loadBundle(url, { cache: true });
  assert.deepEqual(bundle.files['weights.safetensors'], full, 'the loader returns the full file');
  assert.deepEqual(deleted, [weightsUrl], 'the bad cached copy is deleted');
  assert.equal(hits['weights.safetensors'], before['weights.safetensors'] + 1, 'and fetched once more');
  assert.equal(hits['config.json'], before['config.json'], 'good cached copies are used as they are');
  assert.equal(hits['manifest.json'], before['manifest.json']);
  assert.deepEqual(store.get(weightsUrl), full, 'the cache now holds the full file');

  // Cached copy and server copy both bad: one retry, then a clear error, and nothing bad is left in the cache.
  store.set(weightsUrl, full.slice(0, 10));
  writeFileSync(path.join(dir, 'weights.safetensors'), full.subarray(0, 12345));
  const n = hits['weights.safetensors'];
  await assert.rejects(loadBundle(url, { cache: true }),
    new RegExp(`model sst2-selfattn: weights\\.safetensors is truncated: got 12345 of ${full.length} bytes: the download may be cut off or stale`));
  assert.equal(hits['weights.safetensors'], n + 1);
  assert.equal(store.has(weightsUrl), false);
});

test('a stale manifest in the cache is replaced when the bundle on the server changed', async (t) => {
  const dir = copyBundle(t);
  const { url, hits } = await serveFolder(t, dir);
  const { store } = fakeCaches(t);
  await loadBundle(url, { cache: true }); // caches the bundle as it was
  store.delete(`${url}weights.safetensors`); // e.g. evicted

  // The server now has another revision: config.json and the weights changed, with a manifest for them. The cached
  // manifest and config.json still agree with each other, so the first pass takes the cached config; the new weights
  // fail against the cached manifest, which is then fetched again, and the whole bundle is checked against it.
  const configPath = path.join(dir, 'config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8'));
  writeFileSync(configPath, JSON.stringify({ ...config, revision: 2 }, null, 2));
  const flipped = new Uint8Array(readFileSync(path.join(dir, 'weights.safetensors')));
  flipped[flipped.length - 1] ^= 1;
  writeFileSync(path.join(dir, 'weights.safetensors'), flipped);
  writeManifest(dir);
  const before = hits['manifest.json'];
  const bundle = await loadBundle(url, { cache: true });
  assert.equal(bundle.config.revision, 2, 'the new config.json is used');
  assert.deepEqual(bundle.files['weights.safetensors'], flipped);
  assert.equal(hits['manifest.json'], before + 1, 'the manifest was fetched again');
  assert.equal(hits['weights.safetensors'], 2, 'the weights fetched in the first pass are reused in the second');
  assert.equal(JSON.parse(new TextDecoder().decode(store.get(`${url}config.json`))).revision, 2, 'the cache holds the new config');
});

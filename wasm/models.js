// Model bundles for pipeline(): where they live, how they are fetched, cached and reported.
//
// A bundle is a folder (docs/DESIGN.md §5): config.json names its other files — the weights ("weights") and the
// tokenizer's files (tokenizer.file / tokenizer.vocab / tokenizer.merges), plus any listed in "files" — and loadBundle() fetches
// exactly those, never a path the config could point elsewhere (names must be plain file names).
//
// Where a name like 'sst2-selfattn' is looked up, first match wins:
//   options.model_base_url   per call
//   env.modelBaseUrl         global; defaults to the package's own models/ folder (new URL('../models/', import.meta.url)),
//                            so Node and a page served from the package work with no set-up. A bundler-built app
//                            copies node_modules/attnlens/models/ next to its assets and sets env.modelBaseUrl.
// A string with a '/' (or a URL object) is a bundle folder itself: './models/sst2-selfattn/', 'https://…/', or in Node a
// filesystem path. In Node, file: locations are read with node:fs; elsewhere fetch() is used, and in browsers the
// responses are kept in the Cache API (env.cacheName) so that a reload works offline.
//
// Verified files (docs/DESIGN.md §5): a bundle's manifest.json (written by scripts/bundle-digests.mjs) lists the byte
// length and SHA-256 of config.json and of every file config.json names. loadBundle() reads it first and checks each
// file against it before anything parses it: length first ("truncated: got N of M bytes"), then the digest
// (WebCrypto, crypto.subtle). A cached copy that fails is deleted and fetched again once; a manifest that came from the
// cache and disagrees is fetched again too, and the bundle re-checked against it once. Only verified bytes are put in
// the cache. A bundle without manifest.json (third-party bundles) loads as before, with a one-time console warning.
const isNode =
  typeof process === 'object' && process !== null && typeof process.versions === 'object' &&
  typeof process.versions.node === 'string' && typeof window === 'undefined';

export const env = {
  /** Base URL (string or URL) under which bundle names are resolved. */
  modelBaseUrl: new URL('../models/', import.meta.url).href,
  /** Keep fetched model files in the browser's Cache API. */
  useBrowserCache: true,
  /** Cache API bucket; bump it to drop old files. */
  cacheName: 'attnlens-models-v1',
  /** When false, only file: locations (Node) or the browser cache are used; nothing is fetched from a server. */
  allowRemoteModels: true,
};

const PLAIN_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

function checkFileName(name, what) {
  if (typeof name !== 'string' || !PLAIN_NAME.test(name) || name.includes('..')) {
    throw new Error(`attnlens: ${what} must be a plain file name inside the bundle, got ${JSON.stringify(name)}`);
  }
  return name;
}

/** The file names a bundle's config asks for, config.json excluded, in a stable order. */
export function bundleFileNames(config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new Error('attnlens: config.json must hold a JSON object');
  }
  const names = [];
  const add = (name, what) => {
    if (name === undefined || name === null) return;
    checkFileName(name, what);
    if (!names.includes(name)) names.push(name);
  };
  add(config.weights ?? 'weights.safetensors', 'config.json "weights"');
  const tok = config.tokenizer;
  if (tok && typeof tok === 'object') {
    add(tok.file, 'config.json "tokenizer.file"');
    add(tok.vocab, 'config.json "tokenizer.vocab"');
    add(tok.merges, 'config.json "tokenizer.merges"');
  }
  if (config.files !== undefined) {
    if (!Array.isArray(config.files)) throw new Error('attnlens: config.json "files" must be an array of file names');
    for (const f of config.files) add(f, 'an entry of config.json "files"');
  }
  return names;
}

async function nodePathToUrl(p) {
  const urlName = 'node:url';
  const pathName = 'node:path';
  const { pathToFileURL } = await import(/* @vite-ignore */ /* webpackIgnore: true */ urlName);
  const { resolve } = await import(/* @vite-ignore */ /* webpackIgnore: true */ pathName);
  return pathToFileURL(resolve(p) + '/');
}

/** Resolves a model argument to the URL of its folder (always ending in '/'). */
export async function resolveModelUrl(model, options = {}) {
  if (model instanceof URL) return new URL(model.href.endsWith('/') ? model.href : `${model.href}/`);
  if (typeof model !== 'string' || model.length === 0) {
    throw new TypeError('attnlens: the model must be a bundle name such as "sst2-selfattn", a folder URL or path, or a loaded bundle');
  }
  const withSlash = model.endsWith('/') ? model : `${model}/`;
  if (/^[a-z][a-z0-9+.-]*:/i.test(model)) return new URL(withSlash);
  if (model.includes('/') || model.includes('\\') || model.startsWith('.')) {
    if (isNode) return nodePathToUrl(model);
    const base = typeof location === 'object' && location !== null && location.href ? location.href : import.meta.url;
    return new URL(withSlash, base);
  }
  checkFileName(model, 'a model name');
  let base = options.model_base_url ?? env.modelBaseUrl;
  if (base instanceof URL) base = base.href;
  if (typeof base !== 'string' || base.length === 0) throw new TypeError('attnlens: model_base_url / env.modelBaseUrl must be a URL string');
  if (!base.endsWith('/')) base += '/';
  if (isNode && !/^[a-z][a-z0-9+.-]*:/i.test(base)) return new URL(withSlash, await nodePathToUrl(base));
  const pageBase = typeof location === 'object' && location !== null && location.href ? location.href : import.meta.url;
  return new URL(withSlash, new URL(base, pageBase));
}

// A file that is not there (ENOENT, HTTP 404/410): loadBundle() marks a missing config.json as a missing bundle, which
// pipeline() turns into a message about the model name (missingBundleUrl()).
const NOT_FOUND = Symbol('attnlens.notFound');
const MISSING_BUNDLE = Symbol('attnlens.missingBundle');
function notFound(message) {
  const err = new Error(message);
  err[NOT_FOUND] = true;
  return err;
}

/** The folder URL of a bundle that loadBundle() found no config.json in, when `err` says so; else undefined. */
export function missingBundleUrl(err) {
  return err !== null && typeof err === 'object' ? err[MISSING_BUNDLE] : undefined;
}

async function readNodeFile(url) {
  const fsName = 'node:fs/promises';
  const { readFile } = await import(/* @vite-ignore */ /* webpackIgnore: true */ fsName);
  try {
    return new Uint8Array(await readFile(url));
  } catch (err) {
    const message = `attnlens: cannot read model file ${url.pathname} (${err.code ?? err.message})`;
    throw err.code === 'ENOENT' ? notFound(message) : new Error(message);
  }
}

async function openCache(options) {
  const wanted = options.cache ?? env.useBrowserCache;
  if (!wanted || typeof caches === 'undefined' || caches === null) return null;
  // Node has no Cache API of its own; one provided by the host (a polyfill, a test's fake) is used only when a call
  // asks for it with `cache: true`.
  if (isNode && options.cache !== true) return null;
  try {
    return await caches.open(env.cacheName);
  } catch {
    return null; // e.g. opaque origins, private modes: work without a cache
  }
}

// Reads a Response body in chunks so progress can be reported; falls back to arrayBuffer() without streams.
async function readBody(response, onChunk) {
  if (!response.body || typeof response.body.getReader !== 'function') {
    const bytes = new Uint8Array(await response.arrayBuffer());
    onChunk(bytes.length);
    return bytes;
  }
  const reader = response.body.getReader();
  const chunks = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    length += value.length;
    onChunk(value.length);
  }
  const out = new Uint8Array(length);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

// Reads one file: node:fs for file: URLs, else the Cache API (unless skipCache), else fetch(). Nothing is cached
// here: the caller puts a network copy in the cache once it has passed the manifest check (putInCache).
// Returns { bytes, source: 'file' | 'cache' | 'network' }.
async function fetchFile(url, { cache, options, onChunk, onTotal, skipCache = false }) {
  if (url.protocol === 'file:') {
    if (!isNode) throw new Error(`attnlens: cannot read ${url.href} outside Node; serve the models over http(s)`);
    const bytes = await readNodeFile(url);
    onTotal(bytes.length);
    onChunk(bytes.length);
    return { bytes, source: 'file' };
  }
  if (cache && !skipCache) {
    let hit;
    try {
      hit = await cache.match(url.href);
    } catch {
      hit = undefined;
    }
    if (hit) {
      const n = Number(hit.headers.get('content-length')) || 0;
      if (n) onTotal(n);
      try {
        return { bytes: await readBody(hit, onChunk), source: 'cache' };
      } catch {
        await dropFromCache(cache, url); // an unreadable cached copy: fetched again below
      }
    }
  }
  if (options.local_files_only || !env.allowRemoteModels) {
    throw new Error(`attnlens: ${url.href} is not in the local cache and remote models are disabled (local_files_only)`);
  }
  let response;
  try {
    response = await fetch(url.href, skipCache ? { cache: 'reload' } : undefined);
  } catch (err) {
    throw new Error(`attnlens: fetching ${url.href} failed (${err.message}); check the model name and env.modelBaseUrl`);
  }
  if (!response.ok) {
    const message = `attnlens: fetching ${url.href} failed with HTTP ${response.status}; check the model name and env.modelBaseUrl`;
    throw response.status === 404 || response.status === 410 ? notFound(message) : new Error(message);
  }
  const n = Number(response.headers.get('content-length')) || 0;
  if (n) onTotal(n);
  return { bytes: await readBody(response, onChunk), source: 'network' };
}

async function putInCache(cache, url, bytes) {
  if (!cache) return;
  try {
    await cache.put(url.href, new Response(bytes, { headers: { 'content-length': String(bytes.length) } }));
  } catch {
    // A full or unavailable cache only costs the next download.
  }
}

async function dropFromCache(cache, url) {
  if (!cache) return;
  try {
    await cache.delete(url.href);
  } catch {
    // nothing more to do: the copy is not used either way
  }
}

const MANIFEST = 'manifest.json';
const warned = new Set();
function warnOnce(key, message) {
  if (warned.has(key)) return;
  warned.add(key);
  console.warn(message);
}

// A manifest check failed: the retry logic below tells these from other errors.
const MISMATCH = Symbol('attnlens.mismatch');
function mismatch(message) {
  const err = new Error(message);
  err[MISMATCH] = true;
  return err;
}

/** Parses and checks manifest.json: {"format": "attnlens-manifest", "version": 1, "files": {name: {sha256, bytes}}}. */
export function parseManifest(bytes, name = 'bundle') {
  const where = `attnlens: model ${name}: ${MANIFEST}`;
  let doc;
  try {
    doc = JSON.parse(new TextDecoder('utf-8').decode(bytes));
  } catch (err) {
    throw new Error(`${where} is not valid JSON (${err.message})`);
  }
  if (doc === null || typeof doc !== 'object' || doc.format !== 'attnlens-manifest') {
    throw new Error(`${where} is not an attnlens manifest (expected "format": "attnlens-manifest")`);
  }
  if (doc.version !== 1) throw new Error(`${where} has version ${JSON.stringify(doc.version)}; this package reads version 1`);
  if (doc.files === null || typeof doc.files !== 'object' || Array.isArray(doc.files)) {
    throw new Error(`${where}: "files" must be an object`);
  }
  const files = {};
  for (const [file, entry] of Object.entries(doc.files)) {
    checkFileName(file, `a file of ${MANIFEST}`);
    if (entry === null || typeof entry !== 'object' || typeof entry.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(entry.sha256) ||
        !Number.isSafeInteger(entry.bytes) || entry.bytes < 0) {
      throw new Error(`${where}: the entry of ${file} must be {"sha256": 64 lower-case hex digits, "bytes": a byte count}`);
    }
    files[file] = { sha256: entry.sha256, bytes: entry.bytes };
  }
  return { format: doc.format, version: doc.version, files };
}

export async function sha256Hex(bytes) {
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  let hex = '';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return hex;
}

// null when `bytes` are the file the manifest describes, else what is wrong (without the model's name).
async function checkAgainst(file, bytes, entry) {
  if (bytes.length < entry.bytes) return `${file} is truncated: got ${bytes.length} of ${entry.bytes} bytes`;
  if (bytes.length > entry.bytes) return `${file} has ${bytes.length} bytes, ${entry.bytes} expected by its manifest`;
  if (!globalThis.crypto?.subtle) {
    // Browsers offer WebCrypto only in secure contexts (https, localhost): elsewhere only the lengths are checked.
    warnOnce('no-subtle', 'attnlens: crypto.subtle is not available (a page served over plain http?): model files are checked ' +
      'by length only, not by SHA-256; serve the page over https or from localhost');
    return null;
  }
  const got = await sha256Hex(bytes);
  return got === entry.sha256 ? null : `${file} does not match its manifest (sha256 ${got}, expected ${entry.sha256})`;
}

// Reads manifest.json: from the cache first (unless `fresh`), else from the folder or server. Returns
// { manifest, bytes, source } or null when the bundle has none (or, offline, none can be had: then with a warning,
// passed to `warn(key, message)`: loadBundle() gives it only once config.json is there, so that a folder holding no
// bundle at all is one error, not a warning about its manifest first).
async function fetchManifest(baseUrl, { name, cache, options, warn, fresh = false }) {
  const url = new URL(MANIFEST, baseUrl);
  const noCheck = 'its files are loaded without a SHA-256 check (see "Verified model files" in the attnlens README)';
  if (url.protocol === 'file:') {
    if (!isNode) throw new Error(`attnlens: cannot read ${url.href} outside Node; serve the models over http(s)`);
    const fsName = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ /* webpackIgnore: true */ fsName);
    let bytes;
    try {
      bytes = new Uint8Array(await readFile(url));
    } catch (err) {
      if (err.code === 'ENOENT') {
        warn(`none:${baseUrl.href}`, `attnlens: model ${name} has no ${MANIFEST}: ${noCheck}`);
        return null;
      }
      throw new Error(`attnlens: cannot read model file ${url.pathname} (${err.code ?? err.message})`);
    }
    return { manifest: parseManifest(bytes, name), bytes, source: 'file' };
  }
  if (cache && !fresh) {
    let hit;
    try {
      hit = await cache.match(url.href);
    } catch {
      hit = undefined;
    }
    if (hit) {
      const bytes = new Uint8Array(await hit.arrayBuffer());
      try {
        return { manifest: parseManifest(bytes, name), bytes, source: 'cache' };
      } catch {
        await dropFromCache(cache, url); // a damaged cached manifest: fetch it again below
      }
    }
  }
  if (options.local_files_only || !env.allowRemoteModels) {
    if (fresh) return null;
    warn(`local:${baseUrl.href}`, `attnlens: model ${name}: ${MANIFEST} is not in the local cache: ${noCheck}`);
    return null;
  }
  let response;
  try {
    response = await fetch(url.href, fresh ? { cache: 'reload' } : undefined);
  } catch (err) {
    if (fresh) return null;
    warn(`offline:${baseUrl.href}`, `attnlens: model ${name}: ${MANIFEST} could not be fetched (${err.message}): ${noCheck}`);
    return null;
  }
  if (response.status === 404 || response.status === 410) {
    if (!fresh) warn(`none:${baseUrl.href}`, `attnlens: model ${name} has no ${MANIFEST}: ${noCheck}`);
    return null;
  }
  if (!response.ok) {
    throw new Error(`attnlens: fetching ${url.href} failed with HTTP ${response.status}; check the model name and env.modelBaseUrl`);
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const manifest = parseManifest(bytes, name);
  await putInCache(cache, url, bytes);
  return { manifest, bytes, source: 'network' };
}

function isLoadedBundle(model) {
  return model !== null && typeof model === 'object' && !(model instanceof URL) &&
    typeof model.config === 'object' && typeof model.files === 'object';
}

/**
 * Fetches a bundle: config.json, then every file it names.
 * @returns {Promise<{ name: string, url: string|null, config: object, configText: string, files: Record<string, Uint8Array> }>}
 */
export async function loadBundle(model, options = {}) {
  if (isLoadedBundle(model)) {
    const configText = model.configText ?? JSON.stringify(model.config);
    for (const f of bundleFileNames(model.config)) {
      if (!(model.files[f] instanceof Uint8Array)) throw new Error(`attnlens: the loaded bundle lacks file ${f} (a Uint8Array)`);
    }
    const out = { name: model.name ?? model.config.name ?? 'bundle', url: null, config: model.config, configText, files: model.files };
    if (model.encoder !== undefined) out.encoder = await loadBundle(model.encoder, options);
    return out;
  }
  const progress = typeof options.progress_callback === 'function' ? options.progress_callback : null;
  const baseUrl = await resolveModelUrl(model, options);
  const name = typeof model === 'string' && !model.includes('/') ? model : baseUrl.pathname.split('/').filter(Boolean).pop();
  const cache = await openCache(options);
  const report = (event) => {
    if (!progress) return;
    try {
      progress({ name, ...event });
    } catch (err) {
      console.error('attnlens: progress_callback threw', err);
    }
  };

  // One pass: the manifest, config.json, then every file config.json names, each checked before it is used. When a
  // check fails and the manifest itself came from the cache, it may be the stale one: a second pass fetches the
  // manifest again and, when it differs, checks everything against it (copies fetched in the first pass are reused).
  const fetched = new Map();
  const onePass = async (manifestInfo) => {
    const manifest = manifestInfo?.manifest ?? null;
    const hint = baseUrl.protocol === 'file:'
      ? 'the file may be cut off, or changed without refreshing manifest.json (node scripts/bundle-digests.mjs)'
      : 'the download may be cut off or stale';
    const getFile = async (file, hooks) => {
      const url = new URL(file, baseUrl);
      const entry = manifest ? manifest.files[file] : undefined;
      if (manifest && !entry) throw mismatch(`attnlens: model ${name}: ${file} is not listed in its ${MANIFEST}`);
      const read = async (skipCache) => {
        hooks.reset();
        const got = await fetchFile(url, { cache, options, onChunk: hooks.onChunk, onTotal: hooks.onTotal, skipCache });
        if (got.source === 'network') fetched.set(url.href, got);
        return got;
      };
      let got = fetched.get(url.href) ?? await read(false);
      if (!entry) {
        if (got.source === 'network') await putInCache(cache, url, got.bytes);
        return got.bytes;
      }
      let problem = await checkAgainst(file, got.bytes, entry);
      if (problem && got.source === 'cache') {
        await dropFromCache(cache, url); // a partial or stale cached copy: never used, fetched once more
        if (options.local_files_only || !env.allowRemoteModels) {
          throw mismatch(`attnlens: model ${name}: the cached ${problem} (deleted; remote models are disabled, so it cannot be fetched again)`);
        }
        got = await read(true);
        problem = await checkAgainst(file, got.bytes, entry);
      }
      if (problem) throw mismatch(`attnlens: model ${name}: ${problem}: ${hint}`);
      if (got.source === 'network') await putInCache(cache, url, got.bytes);
      return got.bytes;
    };
    const noHooks = { reset() {}, onChunk() {}, onTotal() {} };
    const configBytes = await getFile('config.json', noHooks).catch((err) => {
      if (err[NOT_FOUND]) err[MISSING_BUNDLE] = baseUrl.href;
      throw err;
    });
    for (const [key, message] of warnings.splice(0)) warnOnce(key, message);
    const configText = new TextDecoder('utf-8', { fatal: false }).decode(configBytes);
    let config;
    try {
      config = JSON.parse(configText);
    } catch (err) {
      throw new Error(`attnlens: ${name}/config.json is not valid JSON (${err.message})`);
    }
    const names = bundleFileNames(config);
    const totals = Object.fromEntries(names.map((f) => [f, 0]));
    const loaded = Object.fromEntries(names.map((f) => [f, 0]));
    const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);
    report({ status: 'initiate', files: names });
    const files = {};
    await Promise.all(names.map(async (file) => {
      files[file] = await getFile(file, {
        reset: () => { loaded[file] = 0; },
        onTotal: (n) => { totals[file] = n; },
        onChunk: (n) => {
          loaded[file] += n;
          const total = Math.max(sum(totals), sum(loaded));
          report({ status: 'progress', file, loaded: sum(loaded), total, progress: total ? (100 * sum(loaded)) / total : 0 });
        },
      });
      report({ status: 'done', file });
    }));
    report({ status: 'ready', loaded: sum(loaded), total: sum(loaded), progress: 100 });
    return { config, configText, files };
  };

  const warnings = [];
  const warn = (key, message) => warnings.push([key, message]);
  const manifestInfo = await fetchManifest(baseUrl, { name, cache, options, warn });
  let result;
  try {
    result = await onePass(manifestInfo);
  } catch (err) {
    if (!err[MISMATCH] || manifestInfo?.source !== 'cache') throw err;
    const fresh = await fetchManifest(baseUrl, { name, cache, options, warn, fresh: true });
    const same = fresh && fresh.bytes.length === manifestInfo.bytes.length && fresh.bytes.every((b, i) => b === manifestInfo.bytes[i]);
    if (!fresh || same) throw err;
    result = await onePass(fresh);
  }
  const { config, configText, files } = result;
  const out = { name: config.name ?? name, url: baseUrl.href, config, configText, files };
  // A bundle that shares another one (the captioners name their image encoder: "encoder": {"bundle":
  // "mobilenet-v2-imagenet"}) gets it loaded from the sibling folder ../<name>/ as `bundle.encoder`.
  const shared = config.encoder !== null && typeof config.encoder === 'object' ? config.encoder.bundle : undefined;
  if (shared !== undefined) {
    checkFileName(shared, 'config.json "encoder.bundle"');
    out.encoder = await loadBundle(new URL(`../${shared}/`, baseUrl), options);
  }
  return out;
}

/**
 * The bundle with its config's "weight_precision" set to `precision` ('f32' | 'int8'; undefined: unchanged): the
 * engine then keeps the weights a decoding step reads as int8 codes with per-row scales, or as float32 (an int8
 * bundle's weights are then its codes times their scales). The files are shared, not copied.
 */
export function withPrecision(bundle, precision) {
  if (precision === undefined || (bundle.config.weight_precision ?? 'f32') === precision) return bundle;
  const config = { ...bundle.config, weight_precision: precision };
  return { ...bundle, config, configText: JSON.stringify(config) };
}

/** Bytes of a text file of the bundle as a string (vocabularies). */
export function bundleText(bundle, fileName) {
  const bytes = bundle.files[fileName];
  if (!(bytes instanceof Uint8Array)) throw new Error(`attnlens: bundle ${bundle.name} has no file ${fileName}`);
  return new TextDecoder('utf-8').decode(bytes);
}

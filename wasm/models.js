// Model bundles for pipeline(): where they live, how they are fetched, cached and reported.
//
// A bundle is a folder (docs/DESIGN.md §5): config.json names its other files — the weights ("weights") and the
// tokenizer's files (tokenizer.vocab / tokenizer.merges), plus any listed in "files" — and loadBundle() fetches
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

async function readNodeFile(url) {
  const fsName = 'node:fs/promises';
  const { readFile } = await import(/* @vite-ignore */ /* webpackIgnore: true */ fsName);
  try {
    return new Uint8Array(await readFile(url));
  } catch (err) {
    throw new Error(`attnlens: cannot read model file ${url.pathname} (${err.code ?? err.message})`);
  }
}

async function openCache(options) {
  const wanted = options.cache ?? env.useBrowserCache;
  if (!wanted || isNode || typeof caches === 'undefined') return null;
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

async function fetchFile(url, { cache, options, onChunk, onTotal }) {
  if (url.protocol === 'file:') {
    if (!isNode) throw new Error(`attnlens: cannot read ${url.href} outside Node; serve the models over http(s)`);
    const bytes = await readNodeFile(url);
    onTotal(bytes.length);
    onChunk(bytes.length);
    return bytes;
  }
  if (cache) {
    const hit = await cache.match(url.href);
    if (hit) {
      const n = Number(hit.headers.get('content-length')) || 0;
      if (n) onTotal(n);
      return readBody(hit, onChunk);
    }
  }
  if (options.local_files_only || !env.allowRemoteModels) {
    throw new Error(`attnlens: ${url.href} is not in the local cache and remote models are disabled (local_files_only)`);
  }
  let response;
  try {
    response = await fetch(url.href);
  } catch (err) {
    throw new Error(`attnlens: fetching ${url.href} failed (${err.message}); check the model name and env.modelBaseUrl`);
  }
  if (!response.ok) {
    throw new Error(`attnlens: fetching ${url.href} failed with HTTP ${response.status}; check the model name and env.modelBaseUrl`);
  }
  const n = Number(response.headers.get('content-length')) || 0;
  if (n) onTotal(n);
  const bytes = await readBody(response, onChunk);
  if (cache) {
    try {
      await cache.put(url.href, new Response(bytes, { headers: { 'content-length': String(bytes.length) } }));
    } catch {
      // A full or unavailable cache only costs the next download.
    }
  }
  return bytes;
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

  const configBytes = await fetchFile(new URL('config.json', baseUrl), { cache, options, onChunk() {}, onTotal() {} });
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
    files[file] = await fetchFile(new URL(file, baseUrl), {
      cache,
      options,
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

/** Bytes of a text file of the bundle as a string (vocabularies). */
export function bundleText(bundle, fileName) {
  const bytes = bundle.files[fileName];
  if (!(bytes instanceof Uint8Array)) throw new Error(`attnlens: bundle ${bundle.name} has no file ${fileName}`);
  return new TextDecoder('utf-8').decode(bytes);
}

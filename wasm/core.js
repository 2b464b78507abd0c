// Loads the attnlens WebAssembly module once and hands it to the rest of the package (attention.js, text.js and the
// pipeline() API of docs/DESIGN.md §9). Works unchanged in Node 20, browsers, workers and bundlers:
//
// - The .wasm is located with new URL('./dist/attnlens.wasm', import.meta.url), the pattern bundlers (Vite,
//   webpack 5) recognise and rewrite; callers may override it with init({ wasmUrl }) or init({ wasmBinary }).
// - The Emscripten factory is built for web/worker only (wasm/CMakeLists.txt), because 3.1.6's Node path uses
//   require/__dirname, which an ES module lacks. Under Node we read the file ourselves and pass `wasmBinary`;
//   Node's fetch() cannot read file: URLs, so this is the one Node-specific branch.
import createAttnlensModule from './dist/attnlens.js';

const DEFAULT_WASM_URL = new URL('./dist/attnlens.wasm', import.meta.url);
// The threaded module (wasm/CMakeLists.txt, ATTNLENS_WASM_THREADS): the same engine with pthreads. Imported only
// when it can run (Node, or a cross-origin-isolated page), through a URL so that bundlers leave it alone.
const THREADED_JS_URL = new URL('./dist-mt/attnlens-mt.mjs', import.meta.url);
const THREADED_WASM_URL = new URL('./dist-mt/attnlens-mt.wasm', import.meta.url);
// 'auto' uses at most this many threads: the kernels' splits and a list's texts rarely gain beyond it, and each
// thread is a Web Worker holding its own JS heap.
const AUTO_THREADS_MAX = 4;

const isNode =
  typeof process === 'object' && process !== null && typeof process.versions === 'object' &&
  typeof process.versions.node === 'string' && typeof window === 'undefined';

let modulePromise = null;
let wasmModule = null;
let threadedLoadError = null; // why the threaded module did not load, when it was wanted and could run

async function readWasmBinary(url) {
  if (isNode && url.protocol === 'file:') {
    // A variable specifier keeps bundlers from trying to pull node:fs into a browser build.
    const fsName = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ /* webpackIgnore: true */ fsName);
    try {
      return await readFile(url);
    } catch (err) {
      throw new Error(`attnlens: cannot read the WebAssembly module at ${url.href} (${err.message}). ` +
        'Build it with `npm run build:wasm`, or pass init({ wasmUrl }) / init({ wasmBinary }).');
    }
  }
  const response = await fetch(url);
  if (!response.ok) {
    throw new Error(`attnlens: fetching the WebAssembly module from ${url.href} failed with HTTP ${response.status}. ` +
      'Serve wasm/dist/attnlens.wasm next to the package, or pass init({ wasmUrl }) / init({ wasmBinary }).');
  }
  return new Uint8Array(await response.arrayBuffer());
}

function toUrl(value) {
  if (value instanceof URL) return value;
  if (typeof value === 'string') {
    const base = typeof location === 'object' && location !== null && location.href ? location.href : import.meta.url;
    return new URL(value, base);
  }
  throw new TypeError('attnlens: init({ wasmUrl }) must be a URL or a string');
}

// A failed engine call does not throw across WebAssembly: the bindings record the message and return normally
// (wasm/bindings_common.h, guarded()), because a JS exception unwinding through the module's frames would leak
// the memory they hold (the copies of the call's arguments). Here every bound function — free functions, class
// constructors, static functions and methods — is wrapped to ask hasError() after each call and throw that Error.
function throwRecordedErrors(m) {
  const check = () => {
    if (m.hasError()) throw new Error(m.takeError());
  };
  const wrap = (fn) => function checkedCall(...args) {
    const result = fn.apply(this, args);
    check();
    return result;
  };
  const own = (obj) => Object.getOwnPropertyNames(obj).filter((k) => k !== 'constructor' && k !== 'prototype' &&
    typeof Object.getOwnPropertyDescriptor(obj, k).value === 'function');
  for (const name of Object.keys(m)) {
    const v = m[name];
    if (typeof v !== 'function' || name === 'hasError' || name === 'takeError') continue;
    if (v.prototype && typeof v.prototype.isAliasOf === 'function') { // an Embind class
      for (const k of own(v.prototype)) v.prototype[k] = wrap(v.prototype[k]);
      for (const k of own(v)) v[k] = wrap(v[k]);
      m[name] = new Proxy(v, {
        construct(target, args) {
          const object = Reflect.construct(target, args, target);
          check();
          return object;
        },
      });
    } else if (typeof v.argCount === 'number') { // an Embind free function
      m[name] = wrap(v);
    }
  }
}

/** Whether this environment can run the threaded module: Node, or a page/worker with SharedArrayBuffer and
 * cross-origin isolation (COOP/COEP headers). */
export function threadsAvailable() {
  if (isNode) return true;
  return typeof SharedArrayBuffer === 'function' && globalThis.crossOriginIsolated === true;
}

// The machine's threads: navigator.hardwareConcurrency in browsers (and Node ≥ 21), os.availableParallelism() in
// Node 20, which has no navigator.
async function hardwareThreads() {
  let n = typeof navigator === 'object' && navigator !== null ? navigator.hardwareConcurrency : undefined;
  if (n === undefined && isNode) {
    const osName = 'node:os'; // a variable specifier keeps bundlers from pulling node:os into a browser build
    const os = await import(/* @vite-ignore */ /* webpackIgnore: true */ osName);
    n = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  }
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

const startedThreads = (m) => m.attnlensStartedThreads ?? 1;

function checkThreadsOption(threads) {
  if (threads === undefined || threads === 'auto') return 'auto';
  if (!Number.isInteger(threads) || threads < 1 || threads > 16) {
    throw new RangeError(`attnlens: init({ threads }) must be 'auto' or a whole number from 1 to 16, got ${String(threads)}`);
  }
  return threads;
}

// Instantiates the threaded module with `threads` − 1 Web Workers (Node: worker_threads) started up front.
async function createThreaded(threads, printErr) {
  const binary = await readWasmBinary(THREADED_WASM_URL);
  const { default: create } = await import(/* @vite-ignore */ /* webpackIgnore: true */ THREADED_JS_URL.href);
  // The workers are unref()'d (wasm/threads-pre.js); keep a Node process alive until they have loaded.
  const keepAlive = isNode ? setInterval(() => {}, 1 << 30) : null;
  try {
    return await create({ wasmBinary: binary, attnlensWorkers: threads - 1, printErr, print: printErr });
  } finally {
    if (keepAlive !== null) clearInterval(keepAlive);
  }
}

/**
 * Loads and instantiates the WebAssembly module. Idempotent: later calls return the same module (their options
 * are ignored once loading has started).
 *
 * threads: 'auto' (the default) or a count. Where threads can run (Node, or a cross-origin-isolated page: see
 * threadsAvailable()) and more than one is asked for, the threaded module (wasm/dist-mt/) is loaded with that many
 * threads ('auto': the hardware's, at most 4); otherwise, or when it fails to load, the single-threaded module.
 * Results are the same either way; threads() says what is in use. wasmUrl / wasmBinary name the single-threaded
 * module's file and choose it.
 * @param {{ wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | Uint8Array, threads?: 'auto' | number }} [options]
 */
export function init(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('attnlens: init(options) expects an object such as { wasmUrl }, { wasmBinary } or { threads }');
  }
  if (!modulePromise) {
    const threadsOption = checkThreadsOption(options.threads);
    modulePromise = (async () => {
      let binary = options.wasmBinary;
      if (binary instanceof ArrayBuffer) binary = new Uint8Array(binary);
      if (binary !== undefined && !(binary instanceof Uint8Array)) {
        throw new TypeError('attnlens: init({ wasmBinary }) must be an ArrayBuffer or a Uint8Array');
      }
      const printErr = (text) => console.error(`attnlens: ${text}`);
      const wanted = threadsOption === 'auto' ? Math.min(await hardwareThreads(), AUTO_THREADS_MAX) : threadsOption;
      let m = null;
      threadedLoadError = null;
      if (wanted > 1 && binary === undefined && options.wasmUrl === undefined && threadsAvailable()) {
        try {
          m = await createThreaded(wanted, printErr);
          throwRecordedErrors(m);
          m.attnlensStartedThreads = m.setThreads(wanted);
        } catch (err) {
          threadedLoadError = err; // e.g. a bundler that did not copy dist-mt/: the single-threaded module serves
          m = null;
        }
      }
      if (m === null) {
        if (binary === undefined) {
          binary = await readWasmBinary(options.wasmUrl === undefined ? DEFAULT_WASM_URL : toUrl(options.wasmUrl));
        }
        m = await createAttnlensModule({ wasmBinary: binary, printErr, print: printErr });
        throwRecordedErrors(m);
      }
      wasmModule = m;
      return wasmModule;
    })();
    // A failed load may be retried (e.g. after the caller fixes wasmUrl).
    modulePromise.catch(() => {
      modulePromise = null;
    });
  }
  return modulePromise;
}

// The module of converted Hugging Face models (wasm/CMakeLists.txt, attnlens_hf_wasm): the engine with every binding
// plus the converted architectures, single-threaded, instantiated on first use beside the module init() loads.
const HF_JS_URL = new URL('./dist/attnlens-hf.js', import.meta.url);
const HF_WASM_URL = new URL('./dist/attnlens-hf.wasm', import.meta.url);
let hfPromise = null;

/**
 * Loads the module that runs converted Hugging Face bundles (hf-bert, hf-distilbert, hf-gpt2, hf-marian, hf-vit).
 * Idempotent; the pipelines of converted bundles call it, so the shipped models never pay for it.
 * @param {{ wasmUrl?: string | URL, jsUrl?: string | URL }} [options]
 */
export function initHf(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('attnlens: initHf(options) expects an object');
  if (!hfPromise) {
    hfPromise = (async () => {
      const wasmUrl = options.wasmUrl === undefined ? HF_WASM_URL : toUrl(options.wasmUrl);
      const jsUrl = options.jsUrl === undefined ? HF_JS_URL : toUrl(options.jsUrl);
      let binary, create;
      try {
        binary = await readWasmBinary(wasmUrl);
        ({ default: create } = await import(/* @vite-ignore */ /* webpackIgnore: true */ jsUrl.href));
      } catch (err) {
        throw new Error(`attnlens: could not load the converted models' WebAssembly module from ${wasmUrl.href} and ` +
          `${jsUrl.href} (the package carries it as wasm/dist/attnlens-hf.*; where it is served elsewhere, pass ` +
          `pipeline(task, bundle, { wasm: { hf: { wasmUrl, jsUrl } } })): ${err.message}`);
      }
      const printErr = (text) => console.error(`attnlens: ${text}`);
      const m = await create({ wasmBinary: binary, printErr, print: printErr });
      throwRecordedErrors(m);
      return m;
    })();
    hfPromise.catch(() => {
      hfPromise = null;
    });
  }
  return hfPromise;
}

/** The instantiated module; throws a clear Error when init() has not finished. */
export function getModule() {
  if (!wasmModule) {
    throw new Error('attnlens: the WebAssembly module is not loaded yet; `await init()` before calling attention ops');
  }
  return wasmModule;
}

export function isReady() {
  return wasmModule !== null;
}

/** Library version, the SIMD path of the kernels ("wasm-simd128"), the current WASM heap size in bytes, the threads
 * in use and whether the module has threads (and, when the threaded module was wanted but failed, why). */
export function info() {
  const m = getModule();
  const out = { version: m.version(), simd: m.simdBackend(), heapBytes: m.HEAP8.buffer.byteLength,
    threads: m.threads(), threaded: m.threadsSupported() };
  if (threadedLoadError !== null) out.threadedLoadError = String(threadedLoadError.message ?? threadedLoadError);
  return out;
}

/** Threads the engine uses (1 in the single-threaded module). */
export function threads() {
  return getModule().threads();
}

/**
 * Changes the threads the engine uses, from 1 up to the count init() started with (the threaded module's Web
 * Workers are started at load; more would have to wait for the event loop). Returns the count in force.
 * @param {number} n
 */
export function setThreads(n) {
  const m = getModule();
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`attnlens: setThreads(n) expects a whole number ≥ 1, got ${String(n)}`);
  if (!m.threadsSupported()) {
    if (n === 1) return 1;
    throw new RangeError('attnlens: setThreads(n > 1): the single-threaded module is loaded (threads need Node or a ' +
      'cross-origin-isolated page, and init({ threads }) before the first load)');
  }
  if (n > startedThreads(m)) {
    throw new RangeError(`attnlens: setThreads(${n}): init() started ${startedThreads(m)} threads; pass init({ threads: ${n} }) before the first load`);
  }
  return m.setThreads(n);
}

/**
 * Memory of the WebAssembly module, a diagnostic for tests and long-running apps: heapBytes (the WebAssembly memory;
 * it only ever grows), arenaBytes (what malloc has taken from it; it only grows too) and usedBytes / freeBytes
 * (bytes in live malloc blocks / free inside the arena). usedBytes returns to its level once the objects of a call
 * are freed, so it is the figure that shows a leak.
 * @returns {{ heapBytes: number, arenaBytes: number, usedBytes: number, freeBytes: number }}
 */
export function memoryStats() {
  const s = getModule().heapStats();
  return { heapBytes: s.heapBytes, arenaBytes: s.arenaBytes, usedBytes: s.usedBytes, freeBytes: s.freeBytes };
}

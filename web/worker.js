// The inference worker: every model runs here, so the page stays responsive while a bundle downloads or a beam
// search runs. It uses the package's public entry exactly as an app would; bundles are looked up by name under
// /models/ (env.modelBaseUrl) and kept in the Cache API by the package, so a reload works offline.
//
// Messages in:  { id, type: 'info' }
//               { id, type: 'memory' }  (memoryStats() of the package: the WebAssembly heap, for load tests)
//               { id, type: 'load', task, model }
//               { id, type: 'run', task, model, input, options }
//               { id, type: 'run', task, model, args }  (the pipeline's arguments, e.g. [image, question, options])
//               { id, type: 'align', task, model, source, target, options }  (translation: forced decoding of `target`)
//               { id, type: 'open', files, int8, name }  { id, type: 'open-run', input, options }  (a model from the
//               person's own files, held here until the next 'open': open-worker.js)
//               { id, type: 'debug-crash', mode }  (only when loaded as worker.js?test-hooks=1, i.e. from a page opened
//               with ?test-hooks=1: the next run/align fails on purpose; mode 'throw' | 'trap' | 'hang')
// Messages out: { id, type: 'progress', event }  (download progress of `load`/`run`; `open`: { status: 'step', text })
//               { id, type: 'result', value }     { id, type: 'error', message, missing, fatal }
//               { type: 'csp-violation', text }   (a Content-Security-Policy violation in the worker)
// `fatal`: a WebAssembly trap (RuntimeError, e.g. an abort in the engine) or running out of memory; the module may
// be in a broken state, so the page (client.js) terminates this worker and starts a new one.
import { pipeline, env, init, info, memoryStats, AttentionMaps } from '../wasm/index.js';
import { openModel, runOpened } from './open-worker.js';

env.modelBaseUrl = new URL('../models/', self.location.href).href;

const pipes = new Map();

const TEST_HOOKS = new URL(self.location.href).searchParams.get('test-hooks') === '1';
let crashNext = null; // test hooks: how the next run/align request fails

// A WebAssembly module whose only function executes `unreachable`: calling it is a real trap (WebAssembly.RuntimeError),
// as when the engine aborts.
const TRAP_WASM = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 7, 5, 1, 1, 102, 0, 0,
  10, 5, 1, 3, 0, 0, 11]);

function debugCrash(mode) {
  if (mode === 'throw') {
    // An uncaught error in the worker: the page gets an 'error' event and this request never answers.
    setTimeout(() => { throw new Error('debug-crash: an uncaught error in the worker'); });
    return new Promise(() => {});
  }
  if (mode === 'trap') {
    new WebAssembly.Instance(new WebAssembly.Module(TRAP_WASM)).exports.f();
  }
  if (mode === 'hang') {
    const end = Date.now() + 10 * 60_000; // busy until the page terminates the worker (bounded, just in case)
    while (Date.now() < end) { /* spin */ }
  }
  throw new Error(`debug-crash: unknown mode ${mode}`);
}

// Fatal: the module may be broken after a trap, and a heap that grew to its limit never shrinks.
function isFatal(err) {
  return err instanceof WebAssembly.RuntimeError ||
    /out of memory|allocation failed|Cannot enlarge memory|Memory\.grow|bad_alloc/i.test(String(err?.message ?? err));
}

self.addEventListener('securitypolicyviolation', (e) => {
  self.postMessage({ type: 'csp-violation', text: `${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} in ${e.sourceFile}:${e.lineNumber}` });
});

function getPipe(task, model, id) {
  const key = `${task}|${model}`;
  if (!pipes.has(key)) {
    const p = pipeline(task, model, {
      progress_callback: (event) => self.postMessage({ id, type: 'progress', event: { ...event, files: undefined } }),
    });
    pipes.set(key, p);
    p.catch(() => pipes.delete(key)); // a failed load may be retried
  }
  return pipes.get(key);
}

// A missing bundle or task module (HTTP 404, failed dynamic import) means "not in this build", not a bug.
function isMissing(err) {
  const m = String(err?.message ?? err);
  return /HTTP 404|not found|Failed to fetch dynamically imported module|Cannot find module|error loading dynamically imported module|Importing a module script failed/i.test(m);
}

// Results are plain objects with typed arrays. Methods and getters are dropped; each typed array that owns its whole
// buffer is moved to the page, not cloned: its buffer goes in the transfer list. A view into a larger buffer (never
// the WASM heap itself) is copied first, as is a buffer seen twice. A result's maps (AttentionMaps: one values
// buffer and one index per result, whatever the number of maps) cross as { attnlensMaps: 1, kinds, index, values }
// with both buffers moved, and client.js rebuilds the AttentionMaps on the page.
function plain(value, transfer = null) {
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (value instanceof AttentionMaps) {
    return { attnlensMaps: 1, kinds: value.kinds, index: plain(value.index, transfer), values: plain(value.values, transfer) };
  }
  if (ArrayBuffer.isView(value)) {
    const own = value.byteOffset === 0 && value.byteLength === value.buffer.byteLength &&
      value.buffer instanceof ArrayBuffer && !transfer?.has(value.buffer);
    const v = own && transfer ? value : value.slice();
    transfer?.add(v.buffer);
    return v;
  }
  if (Array.isArray(value)) return value.map((x) => plain(x, transfer));
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'function') out[k] = plain(v, transfer);
  }
  return out;
}

/** Posts a result, moving its typed arrays' buffers (plain()). */
function postResult(id, value) {
  const transfer = new Set();
  const output = plain(value.output, transfer);
  self.postMessage({ id, type: 'result', value: { ...value, output } }, [...transfer]);
}

self.onmessage = async ({ data }) => {
  const { id, type } = data;
  try {
    if (type === 'info') {
      await init();
      self.postMessage({ id, type: 'result', value: info() });
    } else if (type === 'memory') {
      await init();
      self.postMessage({ id, type: 'result', value: memoryStats() });
    } else if (type === 'load') {
      const p = await getPipe(data.task, data.model, id);
      self.postMessage({ id, type: 'result', value: { model: p.model, config: plain(p.config) } });
    } else if (type === 'open') {
      const value = await openModel(data, (text) => self.postMessage({ id, type: 'progress', event: { status: 'step', text } }));
      self.postMessage({ id, type: 'result', value });
    } else if (type === 'open-run') {
      postResult(id, await runOpened(data));
    } else if (type === 'debug-crash' && TEST_HOOKS) {
      if (!['throw', 'trap', 'hang'].includes(data.mode)) throw new Error(`debug-crash: unknown mode ${data.mode}`);
      crashNext = data.mode;
      self.postMessage({ id, type: 'result', value: { armed: data.mode } });
    } else if ((type === 'run' || type === 'align') && crashNext) {
      const mode = crashNext;
      crashNext = null;
      await debugCrash(mode);
    } else if (type === 'run') {
      const p = await getPipe(data.task, data.model, id);
      const t0 = performance.now();
      // `args` (visual-question-answering: image, question, options) or the usual input and options
      const out = await (Array.isArray(data.args) ? p(...data.args) : p(data.input, data.options ?? {}));
      const ms = performance.now() - t0;
      postResult(id, { output: out, ms });
    } else if (type === 'align') {
      const p = await getPipe(data.task, data.model, id);
      if (typeof p.align !== 'function') throw new Error(`the ${data.task} pipeline of ${data.model} has no align()`);
      const t0 = performance.now();
      const out = await p.align(data.source, data.target, data.options ?? {});
      const ms = performance.now() - t0;
      postResult(id, { output: out, ms });
    } else {
      throw new Error(`unknown message type ${type}`);
    }
  } catch (err) {
    const fatal = isFatal(err);
    const message = String(err?.message ?? err);
    self.postMessage({ id, type: 'error', message: fatal ? `${err?.name ?? 'Error'}: ${message}` : message,
      missing: !fatal && isMissing(err), fatal });
  }
};

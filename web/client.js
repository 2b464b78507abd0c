// The page's side of the inference worker (worker.js): promise-returning calls with progress events, and the
// progress bar / status line each demo shows while a model downloads or runs.
//
// The worker survives its own failures: an uncaught error in the worker ('error' event), a WebAssembly trap or an
// out-of-memory error that the worker reports (`fatal`), or a worker that sends nothing for `requestTimeout()` ms
// while a request is pending (stuck, or killed without an event) gets it terminated and a fresh worker started; every
// pending request is rejected with an Error whose `crashed` is true and whose message says so ("The model crashed and
// was restarted: … Try again."), and the next request runs in the new worker. A new worker also gives back the
// memory a grown WASM heap holds (WebAssembly memory never shrinks).
//
// URL parameters of the page: `worker-timeout=<seconds>` changes the timeout (default 120 s, reset by every message
// from the worker, download progress included, so a slow download does not count); `test-hooks=1` lets the worker
// accept 'debug-crash' and exposes `window.attnlensTestHooks` (used by tests/e2e/page.test.mjs).

import { AttentionMaps } from '../wasm/index.js';

const params = new URLSearchParams(globalThis.location?.search ?? '');
export const TEST_HOOKS = params.get('test-hooks') === '1';

export const DEFAULT_TIMEOUT_MS = 120_000;
let timeoutMs = DEFAULT_TIMEOUT_MS;

/** Sets how long a pending request may go without any message from the worker before it is restarted. */
export function setRequestTimeout(ms) {
  if (!Number.isFinite(ms) || ms < 100) throw new RangeError(`request timeout must be at least 100 ms, got ${ms}`);
  timeoutMs = ms;
  arm();
}
export const requestTimeout = () => timeoutMs;
{
  const s = Number(params.get('worker-timeout'));
  if (params.has('worker-timeout') && Number.isFinite(s) && s >= 1) timeoutMs = s * 1000;
}

let worker = null;
let started = false; // the current worker has sent at least one message
let watchdog = 0;
const pending = new Map();
let nextId = 1;
let restarts = 0;

// The worker's results with their maps rebuilt: each { attnlensMaps: 1, kinds, index, values } (worker.js plain())
// becomes an AttentionMaps again, over the buffers that were moved here.
function revive(value) {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
  if (value.attnlensMaps === 1) return AttentionMaps.from({ kinds: value.kinds, index: value.index, values: value.values });
  if (Array.isArray(value)) return value.map(revive);
  for (const k of Object.keys(value)) value[k] = revive(value[k]);
  return value;
}

function startWorker() {
  const url = new URL('./worker.js', import.meta.url);
  if (TEST_HOOKS) url.searchParams.set('test-hooks', '1');
  const w = new Worker(url, { type: 'module' });
  started = false;
  w.onmessage = ({ data }) => {
    if (w !== worker) return;
    started = true;
    arm(); // any message is a sign of life
    if (data.type === 'csp-violation') {
      console.error(`attnlens worker: Content-Security-Policy violation: ${data.text}`);
      return;
    }
    const call = pending.get(data.id);
    if (data.type === 'error' && data.fatal) {
      restart(data.message);
      return;
    }
    if (!call) return;
    if (data.type === 'progress') {
      call.onProgress?.(data.event);
      return;
    }
    settle(data.id);
    if (data.type === 'result') call.resolve(revive(data.value));
    else {
      const err = new Error(data.message);
      err.missing = Boolean(data.missing);
      call.reject(err);
    }
  };
  w.onerror = (ev) => {
    ev.preventDefault?.();
    if (w !== worker) return;
    if (!started && !ev.message) {
      // The worker script itself did not load: say so, start a new one with the next request (no restart loop).
      fail(new Error('the inference worker could not start'), false);
      return;
    }
    restart(ev.message || 'the inference worker stopped');
  };
  w.onmessageerror = () => {
    if (w === worker) restart('a message from the worker could not be read');
  };
  return w;
}

/** Stops the current worker and rejects every pending request with `err`; `again`: start a new worker now. */
function fail(err, again) {
  clearTimeout(watchdog);
  worker?.terminate();
  worker = null;
  const calls = [...pending.values()];
  pending.clear();
  for (const c of calls) c.reject(err);
  if (again) worker = startWorker();
}

function restart(reason) {
  restarts += 1;
  const why = String(reason).replace(/^Uncaught\s+/, '').replace(/[.\s]+$/, '');
  const err = new Error(`The model crashed and was restarted: ${why}. Try again.`);
  err.crashed = true;
  console.warn(`attnlens: inference worker restarted (${why})`);
  fail(err, started);
}

/** (Re)starts the watchdog: the shortest timeout of the pending requests, from now. */
function arm() {
  clearTimeout(watchdog);
  if (!pending.size || !worker) return;
  let ms = Infinity;
  for (const c of pending.values()) ms = Math.min(ms, c.timeoutMs ?? timeoutMs);
  watchdog = setTimeout(() => restart(`it did not answer for ${Math.round(ms / 1000)} s`), ms);
}

function settle(id) {
  pending.delete(id);
  arm();
}

/**
 * Sends a message to the worker; resolves with its result. `timeoutMs` overrides the request timeout for this call.
 * Rejects with `err.crashed === true` when the worker crashed or timed out (it is then restarted).
 */
export function call(type, payload = {}, onProgress, { timeoutMs: ms } = {}) {
  if (!worker) worker = startWorker();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, onProgress, timeoutMs: ms });
    try {
      worker.postMessage({ id, type, ...payload });
    } catch (err) {
      settle(id);
      reject(err);
      return;
    }
    arm();
  });
}

/** The text a status line shows for an error: a crash's own message, else "Error: …". */
export const errorText = (err) => (err?.crashed ? err.message : `Error: ${err?.message ?? err}`);

worker = startWorker(); // at once, so that the module downloads while the page starts

if (TEST_HOOKS) {
  // For the end-to-end tests only (?test-hooks=1): make the worker fail on purpose at its next run/align request.
  globalThis.attnlensTestHooks = Object.freeze({
    /** mode: 'throw' (uncaught error in the worker), 'trap' (a WebAssembly trap), 'hang' (never answers). */
    crashNext: (mode) => call('debug-crash', { mode }),
    /** Any worker request, as the demos send them (load tests: tests/e2e/load.test.mjs). */
    call: (type, payload) => call(type, payload),
    setRequestTimeout,
    requestTimeout,
    restarts: () => restarts,
  });
}

const MB = (n) => `${(n / 1e6).toFixed(1)} MB`;

/**
 * Status handling for one demo: `ui.busy(text)`, `ui.progress(event)`, `ui.done(text)`, `ui.fail(err, missingText)`.
 * The progress row is a <div class="progress-row"><progress/><span/></div> shown while downloading.
 */
export function statusUi({ progress, status, button }) {
  const row = progress.parentElement;
  const label = row.querySelector('span');
  return {
    busy(text) {
      status.textContent = text;
      status.className = 'msg busy';
      if (button) button.disabled = true;
    },
    progress(event) {
      if (event.status === 'progress') {
        row.hidden = false;
        progress.value = Math.min(100, event.progress || 0);
        label.textContent = `downloading ${event.name}: ${MB(event.loaded)}${event.total ? ` of ${MB(event.total)}` : ''}`;
      } else if (event.status === 'ready') {
        progress.value = 100;
        row.hidden = true;
      }
    },
    done(text) {
      row.hidden = true;
      status.textContent = text;
      status.className = 'msg';
      if (button) button.disabled = false;
    },
    fail(err, missingText) {
      row.hidden = true;
      status.textContent = err.missing && missingText ? missingText : errorText(err);
      status.className = err.missing ? 'msg missing' : err.crashed ? 'msg error crashed' : 'msg error';
      if (button) button.disabled = false;
      if (!err.missing) console.warn(err);
    },
  };
}

/** Runs a task in the worker with progress shown by `ui`. */
export function runTask(ui, task, model, input, options) {
  return call('run', { task, model, input, options }, (e) => ui.progress(e));
}

/** Runs a task in the worker with the pipeline's own argument list (e.g. [image, question, options]). */
export function runTaskArgs(ui, task, model, args) {
  return call('run', { task, model, args }, (e) => ui.progress(e));
}

/** Forced decoding in the worker: how `model` aligns a given translation `target` of `source`. */
export function runAlign(ui, task, model, source, target, options) {
  return call('align', { task, model, source, target, options }, (e) => ui.progress(e));
}
